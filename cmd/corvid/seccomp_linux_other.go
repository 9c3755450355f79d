//go:build linux && !amd64 && !arm64

package main

// No filter is built here: the sandbox needs Landlock ABI 6 on these.
var seccompArch seccompArchInfo
