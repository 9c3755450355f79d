package main

// arm64, and 32-bit arm programs under it (socket 281, socketcall 102).
var seccompArch = seccompArchInfo{native: 0xc00000b7, socket: 198, compat: 0x40000028, compatSocket: 281, compatSocketcall: 102}
