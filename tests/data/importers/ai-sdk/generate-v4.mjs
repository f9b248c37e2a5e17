// Writes the AI SDK 4 samples of ctxlab's ai-sdk importer with the real packages, offline:
// a useChat-style Message[] persisted the way a v4 app persists it (appendResponseMessages after
// each generateText), a CoreMessage[] (each run's input, then its response.messages),
// and, for each, the OpenAI chat request body the @ai-sdk/openai chat provider builds of it
// (a fetch that records the body and answers with a fixed completion).
//
// Run from a folder where `npm install ai@4.3.19 @ai-sdk/openai@1.3.24 zod@3.25.76` was done (Node 20):
//   node generate-v4.mjs <out-folder>
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { appendResponseMessages, generateText, tool } from "ai";
import { MockLanguageModelV1 } from "ai/test";
import { createOpenAI } from "@ai-sdk/openai";
import { z } from "zod";

const out = process.argv[2];
mkdirSync(join(out, "v4-wire"), { recursive: true });

const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";
const ITINERARY = Buffer.from("Day 1: Lisbon (Alfama)\nDay 2: train to Porto\n").toString("base64");
const clock = () => new Date("2025-05-14T09:00:00.000Z");
let counter = 0;
const ids = () => `id-${++counter}`;
const usage = { promptTokens: 10, completionTokens: 5 };
const rawCall = { rawPrompt: null, rawSettings: {} };

function call(toolCallId, toolName, args) {
  return { toolCallType: "function", toolCallId, toolName, args: JSON.stringify(args) };
}

function scripted(steps) {
  let step = 0;
  return new MockLanguageModelV1({
    doGenerate: async () => ({ finishReason: "stop", usage, rawCall, ...steps[step++] }),
  });
}

const FORECASTS = {
  Lisbon: { city: "Lisbon", tempC: 24, condition: "sunny", windKmh: 12 },
  Porto: { city: "Porto", tempC: 17, condition: "showers", rainMm: 3 },
  Faro: { city: "Faro", tempC: 26, condition: "sunny", windKmh: 20 },
};
const RATES = { USD: 1.08, GBP: 0.85 };

const tools = {
  getWeather: tool({
    description: "The forecast for a city tomorrow.",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => FORECASTS[city],
  }),
  convertCurrency: tool({
    description: "Convert an amount between currencies.",
    parameters: z.object({ amount: z.number(), from: z.string(), to: z.string() }),
    execute: async ({ amount, from, to }) => ({ amount, from, to, rate: RATES[to], result: Math.round(amount * RATES[to] * 100) / 100 }),
  }),
  searchPlaces: tool({
    description: "Find places near a landmark.",
    parameters: z.object({ query: z.string(), near: z.string() }),
    execute: async () => "Café Nicola (Rossio 24), Confeitaria Nacional (Praça da Figueira 18B)",
  }),
};

async function turn(messages, steps) {
  const result = await generateText({
    model: scripted(steps),
    tools,
    maxSteps: 5,
    system: "You are a travel assistant for Portugal. Use the tools; answer briefly.",
    messages,
    _internal: { generateId: ids, currentDate: clock },
    experimental_generateMessageId: ids,
  });
  return result;
}

function user(text, extra = {}) {
  return { id: ids(), createdAt: clock(), role: "user", content: text, parts: [{ type: "text", text }], ...extra };
}

// The useChat history: three turns, persisted after each.
let messages = [
  user("What's the weather in Lisbon and Porto tomorrow? My map and itinerary are attached.", {
    experimental_attachments: [
      { name: "map.png", contentType: "image/png", url: `data:image/png;base64,${PIXEL}` },
      { name: "itinerary.txt", contentType: "text/plain", url: `data:text/plain;base64,${ITINERARY}` },
    ],
  }),
];
let result = await turn(messages, [
  {
    reasoning: [{ type: "text", text: "Two cities: look both up at once.", signature: "sig-1" }],
    text: "Checking both cities.",
    toolCalls: [call("call_w1", "getWeather", { city: "Lisbon" }), call("call_w2", "getWeather", { city: "Porto" })],
  },
  { text: "Lisbon: sunny, 24 °C. Porto: showers, 17 °C; pack a light rain jacket for day 2." },
]);
messages = appendResponseMessages({ messages, responseMessages: result.response.messages, _internal: { currentDate: clock } });

messages.push(user("Convert 120 EUR to USD and find a café near Rossio."));
result = await turn(messages, [
  {
    reasoning: [
      { type: "redacted", data: "cmVkYWN0ZWQ=" },
      { type: "text", text: "Currency first, then the café search.", signature: "sig-2" },
    ],
    toolCalls: [call("call_c1", "convertCurrency", { amount: 120, from: "EUR", to: "USD" })],
  },
  { toolCalls: [call("call_p1", "searchPlaces", { query: "café", near: "Rossio" })] },
  { text: "120 EUR is about 129.60 USD. Near Rossio: Café Nicola or Confeitaria Nacional." },
]);
messages = appendResponseMessages({ messages, responseMessages: result.response.messages, _internal: { currentDate: clock } });

messages.push(
  user("Is this the café?", {
    experimental_attachments: [
      { name: "cafe.jpg", contentType: "image/jpeg", url: "https://example.com/photos/cafe-nicola.jpg" },
    ],
  }),
);
result = await turn(messages, [{ text: "Yes: that is the Art Deco front of Café Nicola on Rossio." }]);
messages = appendResponseMessages({ messages, responseMessages: result.response.messages, _internal: { currentDate: clock } });

// The CoreMessage history: two generateText runs, the second given the first's input and
// response.messages and a new user message, as an app keeping core messages continues a chat.
const system = { role: "system", content: "You are a travel assistant for Portugal. Use the tools; answer briefly." };
let core = [system, { role: "user", content: "Weather in Faro tomorrow?" }];
result = await generateText({
  model: scripted([
    { reasoning: "One city, one lookup.", toolCalls: [call("call_f1", "getWeather", { city: "Faro" })] },
    { text: "Faro: sunny, 26 °C and windy." },
  ]),
  tools,
  maxSteps: 5,
  messages: core,
  _internal: { generateId: ids, currentDate: clock },
  experimental_generateMessageId: ids,
});
core = [
  ...core,
  ...result.response.messages,
  {
    role: "user",
    content: [
      { type: "text", text: "Convert 50 EUR to GBP. And is this Faro's old town?" },
      { type: "image", image: PIXEL, mimeType: "image/png" },
    ],
  },
];
result = await generateText({
  model: scripted([
    { toolCalls: [call("call_f2", "convertCurrency", { amount: 50, from: "EUR", to: "GBP" })] },
    { text: "50 EUR is about 42.50 GBP. The picture is a single pixel, so I cannot tell." },
  ]),
  tools,
  maxSteps: 5,
  messages: core,
  _internal: { generateId: ids, currentDate: clock },
  experimental_generateMessageId: ids,
});
core = [...core, ...result.response.messages];

// What the OpenAI chat provider sends for each history.
async function wire(history) {
  let body;
  const openai = createOpenAI({
    apiKey: "test",
    fetch: async (_url, init) => {
      body = JSON.parse(init.body);
      const answer = {
        id: "chatcmpl-1", object: "chat.completion", created: 0, model: "gpt-4o-mini",
        choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      };
      return new Response(JSON.stringify(answer), { headers: { "content-type": "application/json" } });
    },
  });
  await generateText({ model: openai.chat("gpt-4o-mini"), messages: history });
  return body.messages;
}

const write = (name, value) => writeFileSync(join(out, name), JSON.stringify(value, null, 2) + "\n");
write("v4-use-chat.json", messages);
write("v4-core-messages.json", core);
write("v4-wire/v4-use-chat.openai.json", await wire(JSON.parse(JSON.stringify(messages))));
write("v4-wire/v4-core-messages.openai.json", await wire(JSON.parse(JSON.stringify(core))));
