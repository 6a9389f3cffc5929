#!/usr/bin/env node
// The system prompt an LLM agent reads, rendered in Node.js from DescribeEnvironment and an
// observation alone: the same text, byte for byte, as the Python library's
// supportenv.llm.system_prompt (tests/test_describe.py checks it on many observations). A
// client in any language can present the environment this way with nothing but the protos.
//
//   node prompt.js --env 127.0.0.1:50051 [--episodes task:split:seed,...] [--tool-calls] [--protos DIR]
//
// Prints one JSON object per episode: {task_id, split, seed, system_prompt}, the prompt of
// its first observation (Reset); --tool-calls: worded for a function-calling model. As a
// module: systemPrompt(description, observation, {toolCalls}).
"use strict";

const path = require("node:path");
const { grpc, loadApi, call } = require("./grpc_api");

const USAGE =
  "usage: node prompt.js --env HOST:PORT [--episodes task:split:seed,...] [--tool-calls] [--protos DIR] [--deadline-ms MS]";
const TOOL_KIND = "use_tool";
const SPLITS = { train: "SPLIT_TRAIN", validation: "SPLIT_VALIDATION", test: "SPLIT_TEST" };

function needsText(article) {
  return article.needs.length ? `needs: ${article.needs.join(", ")}` : "needs no facts";
}

function actionLine(action) {
  const needs = action.required.length ? `required: ${action.required.join(", ")}` : "all parameters optional";
  return `- ${action.kind}: ${action.description} Cost $${action.cost.toFixed(0)}; ${needs}.\n  ${action.example}`;
}

function useToolLine(action) {
  return `- ${action.kind}: ${action.description} Cost: the tool's; required: tool, and the tool's arguments.\n  ${action.example}`;
}

function toolLine(tool) {
  const kind = tool.changes_records ? "a change" : "a look-up";
  const verified = tool.needs_verification
    ? "needs the customer verified first (verify_identity)"
    : "no verification needed";
  const signature = `${tool.name}(${tool.arguments.join(", ")})`;
  return `- ${signature}: ${tool.description} Cost $${tool.cost.toFixed(2)}; ${kind}; ${verified}.\n  ${tool.example}`;
}

// supportenv.llm.system_prompt, from the description and one observation (snake_case fields);
// toolCalls: worded for a model that acts by function calls (system_prompt's tool_calls).
function systemPrompt(description, obs, { toolCalls = false } = {}) {
  const task = description.tasks.find((t) => t.task.task_id === obs.task_id);
  if (!task) throw new Error(`DescribeEnvironment has no task ${obs.task_id}`);
  const allowed = obs.allowed_actions.length ? obs.allowed_actions : task.task.allowed_actions;
  const tools = allowed.includes(TOOL_KIND);
  const text = description.prompt;
  const actions = description.actions.map(actionLine);
  if (tools) actions.push(useToolLine(description.use_tool));
  const issues = description.issue_types.map((i) => `  - ${i.issue_id} (${i.category}): ${i.title}`);
  const articles = description.knowledge_base.map(
    (a) => `- ${a.article_id} ${a.title} (${needsText(a)}): ${a.steps.join("; ")}.`,
  );
  const sections = [
    text.intro,
    `Task: ${obs.task_instructions}`,
    task.grading,
    task.rules,
    "Actions (reply with exactly one):\n" + actions.join("\n"),
    ...(tools ? [text.tools_header + "\n" + description.tools.map(toolLine).join("\n")] : []),
    "Allowed values:\n" +
      `- category: ${description.categories.join(", ")}\n` +
      `- priority: ${description.priorities.join(", ")}\n` +
      `- department: ${description.departments.join(", ")}\n` +
      `- fields (facts you can ask for): ${description.requestable_fields.join(", ")}\n` +
      "- issue_type (with its category):\n" +
      issues.join("\n"),
    text.knowledge_base_header + "\n" + articles.join("\n"),
    "Policy rules:\n" + obs.policy.map((rule) => `- ${rule}`).join("\n"),
    toolCalls
      ? text.tool_call_output_format
      : text.output_format + "\n" + text.example_reply + (tools ? `\nA tool call:\n${text.tool_example_reply}` : ""),
  ];
  return sections.join("\n\n");
}

function parseArgs(argv) {
  const opts = {
    env: process.env.SUPPORTENV_ENV_ADDR || "",
    episodes: [],
    protos: path.resolve(__dirname, "..", "..", "protos"),
    deadlineMs: 15000,
    toolCalls: false,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    if (flag === "-h" || flag === "--help") {
      console.log(USAGE);
      process.exit(0);
    }
    if (flag === "--tool-calls") {
      opts.toolCalls = true;
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    i += 1;
    if (flag === "--env") opts.env = value;
    else if (flag === "--episodes") opts.episodes = value.split(",").filter(Boolean);
    else if (flag === "--protos") opts.protos = path.resolve(value);
    else if (flag === "--deadline-ms") opts.deadlineMs = Number(value);
    else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  if (!opts.env) throw new Error(`--env is required\n${USAGE}`);
  opts.episodes = opts.episodes.map((spec) => {
    const [task_id, split, seed] = spec.split(":");
    if (!task_id || !(split in SPLITS) || !/^\d+$/.test(seed || "")) {
      throw new Error(`bad episode ${spec}: expected task:split:seed, e.g. expert_resolution:test:3`);
    }
    return { task_id, split, seed };
  });
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const api = loadApi(opts.protos);
  const env = new api.EnvService(opts.env, grpc.credentials.createInsecure());
  try {
    const description = await call(env, "DescribeEnvironment", {}, opts.deadlineMs);
    for (const episode of opts.episodes) {
      const request = { task_id: episode.task_id, split: SPLITS[episode.split], seed: episode.seed };
      const reset = await call(env, "Reset", request, opts.deadlineMs);
      const line = { ...episode, seed: Number(episode.seed), system_prompt: systemPrompt(description, reset.observation, opts) };
      process.stdout.write(JSON.stringify(line) + "\n");
    }
  } finally {
    env.close();
  }
}

module.exports = { systemPrompt };

if (require.main === module) {
  main().catch((err) => {
    console.error(`prompt.js: ${err.message}`);
    process.exit(1);
  });
}
