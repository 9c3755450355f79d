#!/usr/bin/env bash
# Validates the Kubernetes manifests in this directory against the Kubernetes
# API's OpenAPI schemas, offline once npm has installed kubernetes-models
# (pinned in package-lock.json; its validators are compiled into the package),
# and checks what docs/scale.md says of them (validate.mjs). A selftest first
# proves that broken manifests are refused. Needs Node >= 20 and npm.
#
# Not checked: fields the schemas do not know (the API's OpenAPI lets them
# through; kubectl apply --validate=strict refuses them against a cluster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
node validate.mjs --selftest
node validate.mjs ./*.yaml
echo "== deploy/k8s: ok"
