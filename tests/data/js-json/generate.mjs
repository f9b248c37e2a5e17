// Writes what Node's JSON.stringify makes of JSON.parse(text) for the texts ctxlab's js_json is
// checked on (tests/workloads/test_js_json.py): numbers of every form a transcript may hold
// (integers past 2**53, exponents, -0, 1.0, overflow), strings with control characters, U+2028,
// emoji and lone surrogates, objects whose keys are array indices, and seeded random doubles
// written with 17 significant digits (not as JavaScript would write them).
//
// Needs no package (Node 20):  node generate.mjs > stringify.json
const FIXED = [
  "0", "-0", "0.0", "-0.0", "1.0", "1", "-1", "0.1", "-0.1", "1e-7", "-1e-7", "1e-6", "1e-5",
  "0.000001", "0.0000001", "25e-6", "123e-20", "4.35", "0.1e1", "100", "1e20", "1e21", "1e+21",
  "-1e21", "1E21", "1.5e300", "5e-324", "2.2250738585072014e-308", "1.7976931348623157e308",
  "1e400", "-1e400", "1e-400", "9007199254740992", "9007199254740993", "-9007199254740993",
  "9007199254740995", "12345678901234567890", "-12345678901234567890", "111111111111111111111",
  "1234567890123456789012", "123456789012345678901234567890", "1" + "0".repeat(308),
  "1" + "0".repeat(309), "-" + "9".repeat(400), "123456789012345680000", "0.30000000000000004",
  "1.2345678901234567e-7", "9.999999999999999e20", "9.999999999999999e21", "9.5e-7",
  "true", "false", "null",
  '""', '"plain"', '"\\"quoted\\" \\\\ back\\/slash"',
  JSON.stringify(Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("") + "\x7f"),
  '"\\u2028 and \\u2029"', '"\\ud800"', '"\\udfff"', '"a\\ud83d"', '"\\ude00b"', '"\\ud83d\\ude00"',
  '"\\ude00\\ud83d"', '"😀 é ß 中"', '"\\u0000"', '"\\uD834\\uDD1E"', '"\\uDBFF"',
  "[]", "{}", "[[[]]]", '{"a":{"b":[1.0,{"c":1e-7}]}}',
  '[0, -0, 1e21, 1e-7, "x", null, true, {"n": 12345678901234567890}]',
  '{"b":1,"2":2,"10":3,"1":4,"01":5,"-1":6,"4294967294":7,"4294967295":8,"1.5":9,"":10,"0":11}',
  '{"a":1,"b":2,"a":3}', '{"\\u2028":"\\ud800","\\u001f":[]}',
];

// xorshift64*, fixed seed: the same doubles on every run
let state = 0x9e3779b97f4a7c15n;
const MASK = (1n << 64n) - 1n;
function next() {
  state ^= state >> 12n;
  state ^= (state << 25n) & MASK;
  state ^= state >> 27n;
  return (state * 0x2545f4914f6cdd1dn) & MASK;
}
const view = new DataView(new ArrayBuffer(8));
function double() {
  view.setBigUint64(0, next());
  return view.getFloat64(0);
}

const random = [];
while (random.length < 1000) {
  const x = double();  // any bit pattern: every exponent, subnormals
  if (Number.isFinite(x)) random.push(x.toPrecision(17));
}
for (let i = 0; i < 1000; i++) {  // few digits at every decimal exponent near the format's switches
  const digits = Number(next() % 100000n);
  const exponent = Number(next() % 60n) - 30;
  const x = Number(`${digits}e${exponent}`) * (next() % 2n ? -1 : 1);
  random.push(x.toPrecision(17));
}
for (let i = 0; i < 200; i++) {  // integers past 2**53
  const length = 17 + Number(next() % 14n);
  random.push(String(next() * next() * next()).slice(0, length));
}

const cases = [...FIXED, ...random].map((json) => [json, JSON.stringify(JSON.parse(json))]);
process.stdout.write(
  JSON.stringify({ node: process.version, cases }).replace(/\],\[/g, "],\n[") + "\n",
);
