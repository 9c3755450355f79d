#!/usr/bin/env bash
# Fetches the official ACP v1 schema that the TypeScript SDK ships
# (@agentclientprotocol/sdk, pinned below with its registry integrity) into the
# directory given as $1 and prints the directory that holds schema.json, for
# ACP_SCHEMA_DIR (TestSchemaMatchesShared in internal/acpkit).
set -euo pipefail
SDK_VERSION=2.4.0
SDK_INTEGRITY='sha512-7qJ8nnyj7WesC5ve185ioTpB2/svQoeGV4HA4nLEhgDUrcmBe54/08VcXc/oL4p14tDbxxECZzdYmUYQ+4l+Wg=='
dir="$1"
mkdir -p "$dir"
cd "$dir"
tgz=$(npm pack --silent --no-fund --loglevel=error "@agentclientprotocol/sdk@$SDK_VERSION" | tail -n 1)
got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
if [ "$got" != "$SDK_INTEGRITY" ]; then
	echo "acp-schema.sh: $tgz has integrity $got, want $SDK_INTEGRITY" >&2
	exit 1
fi
tar -xzf "$tgz" package/schema/v1/schema.json
echo "$dir/package/schema/v1"
