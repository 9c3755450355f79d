package reliability

import "time"

// hangLimit bounds how long an exit or a cancelled prompt may take here. It
// tells "stops promptly" from "waits for the rest of the stream" (the slow
// scripts stream for tens of seconds) without timing a budget on a loaded
// machine: the budgets themselves (100 ms for both, ARCHITECTURE.md §7) are
// benchmarks in test/sdkclient (StdinEOFExit) and the conformance kit.
const hangLimit = 10 * time.Second
