package main

// x86-64, and i386 programs under it (socket 359, socketcall 102); x32
// shares the native arch with bit 30 set in the number, which the filter
// clears.
var seccompArch = seccompArchInfo{native: 0xc000003e, socket: 41, compat: 0x40000003, compatSocket: 359, compatSocketcall: 102}
