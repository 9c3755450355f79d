// xterm-host.cjs: xterm.js's engine (@xterm/headless) as the terminal of a
// Go test (test/tui/xterm_linux_test.go). It reads commands, one JSON object
// a line, on stdin and answers on stdout, one JSON object a line:
//
//	{"op":"write","data":BASE64}   bytes the program wrote; no answer
//	{"op":"sync","id":N}           {"ack":N} once every byte before it is applied
//	{"op":"resize","id":N,"cols":C,"rows":R}
//	                               applies every byte before it, resizes, {"ack":N}
//	{"op":"dump","id":N}           {"ack":N,"lines":[…],"wrapped":[…],"cursor":[x,y],"base":B}
//	                               the buffer, scrollback and screen, row by row
//
// What the terminal answers the program (a query's reply) comes out as
// {"data":BASE64}, for the test to write into the pty. The options are
// those VS Code's integrated terminal gives xterm.js that bear on the
// buffer (scrollOnEraseInDisplay; reflowCursorLine left at its default,
// false), with XTERM_REFLOW_CURSOR_LINE=1 turning the latter on as some
// other hosts do.
'use strict';
const { Terminal } = require('@xterm/headless');
const readline = require('node:readline');

const cols = Number(process.env.XTERM_COLS || 80);
const rows = Number(process.env.XTERM_ROWS || 24);
const term = new Terminal({
  cols, rows,
  scrollback: 100000,
  allowProposedApi: true,
  scrollOnEraseInDisplay: true,
  reflowCursorLine: process.env.XTERM_REFLOW_CURSOR_LINE === '1',
});

function send(obj) { process.stdout.write(JSON.stringify(obj) + '\n'); }

term.onData((d) => send({ data: Buffer.from(d, 'utf8').toString('base64') }));
term.onBinary((d) => send({ data: Buffer.from(d, 'binary').toString('base64') }));

function dump(id) {
  const b = term.buffer.active;
  const lines = [];
  const wrapped = [];
  for (let i = 0; i < b.length; i++) {
    const l = b.getLine(i);
    lines.push(l ? l.translateToString(true) : '');
    wrapped.push(l ? l.isWrapped : false);
  }
  send({ ack: id, lines, wrapped, cursor: [b.cursorX, b.cursorY], base: b.baseY });
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line) return;
  const cmd = JSON.parse(line);
  switch (cmd.op) {
    case 'write':
      term.write(Buffer.from(cmd.data, 'base64'));
      break;
    case 'sync':
      term.write('', () => send({ ack: cmd.id }));
      break;
    case 'resize':
      term.write('', () => { term.resize(cmd.cols, cmd.rows); send({ ack: cmd.id }); });
      break;
    case 'dump':
      term.write('', () => dump(cmd.id));
      break;
    default:
      process.stderr.write(`xterm-host: unknown op ${cmd.op}\n`);
      process.exit(2);
  }
});
rl.on('close', () => process.exit(0));
