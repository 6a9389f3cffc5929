#!/usr/bin/env node
// Plays one episode of every task of the Customer Support AI Training Environment over
// gRPC with a small rule-based policy, has each trajectory graded by the grader service,
// and prints one JSON object per task. Exits non-zero on any error. On a task that takes
// tool calls (its allowed_actions list "use_tool"), the rule looks the case up in the
// records with UseTool and reports each ToolResult (its data_json decoded).
//
//   node play.js --env 127.0.0.1:50051 --grader 127.0.0.1:50052 [--split test] [--seed 0]
//
// The protos are loaded at run time from ../../protos (or --protos DIR) with
// @grpc/proto-loader: nothing is generated. Enums travel by name, bytes as Buffers.
"use strict";

const path = require("node:path");
const { grpc, loadApi, call } = require("./grpc_api");

const USAGE =
  "usage: node play.js --env HOST:PORT --grader HOST:PORT [--split train|validation|test] " +
  "[--seed N] [--tasks a,b] [--protos DIR] [--deadline-ms MS]";

function parseArgs(argv) {
  const opts = {
    env: process.env.SUPPORTENV_ENV_ADDR || "",
    grader: process.env.SUPPORTENV_GRADER_ADDR || "",
    split: "test",
    seed: 0,
    tasks: [],
    protos: path.resolve(__dirname, "..", "..", "protos"),
    deadlineMs: 15000,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i];
    if (flag === "-h" || flag === "--help") {
      console.log(USAGE);
      process.exit(0);
    }
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    i += 1;
    if (flag === "--env") opts.env = value;
    else if (flag === "--grader") opts.grader = value;
    else if (flag === "--split") opts.split = value;
    else if (flag === "--seed") opts.seed = Number(value);
    else if (flag === "--tasks") opts.tasks = value.split(",").filter(Boolean);
    else if (flag === "--protos") opts.protos = path.resolve(value);
    else if (flag === "--deadline-ms") opts.deadlineMs = Number(value);
    else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  if (!opts.env || !opts.grader) throw new Error(`--env and --grader are required\n${USAGE}`);
  if (!["train", "validation", "test"].includes(opts.split)) throw new Error(`bad --split ${opts.split}`);
  if (!Number.isSafeInteger(opts.seed) || opts.seed < 0) throw new Error("--seed must be a non-negative integer");
  if (!(opts.deadlineMs > 0)) throw new Error("--deadline-ms must be positive");
  return opts;
}

// ---- the rule-based policy ----

// What the help desk knows about each issue type: category, public article, the team that
// owns it, and when policy asks for a human.
const ISSUES = {
  payment_failure: ["billing", "KB-PAY-01", "billing", "never"],
  double_charge: ["billing", "KB-BIL-02", "billing", "never"],
  wrong_amount: ["billing", "KB-BIL-03", "billing", "never"],
  subscription_cancel: ["billing", "KB-BIL-04", "billing", "never"],
  invoice_request: ["billing", "KB-BIL-05", "billing", "never"],
  delayed_delivery: ["delivery", "KB-DEL-01", "logistics", "never"],
  lost_package: ["delivery", "KB-DEL-02", "logistics", "never"],
  wrong_item: ["delivery", "KB-DEL-03", "logistics", "never"],
  damaged_item: ["delivery", "KB-DEL-04", "logistics", "never"],
  address_change: ["delivery", "KB-DEL-05", "logistics", "never"],
  international_shipping: ["delivery", "KB-DEL-06", "logistics", "never"],
  refund_request: ["refund", "KB-REF-01", "billing", "over_cap"],
  refund_status: ["refund", "KB-REF-02", "billing", "never"],
  return_label: ["refund", "KB-REF-03", "logistics", "never"],
  price_adjustment: ["refund", "KB-REF-04", "billing", "never"],
  account_locked: ["account", "KB-ACC-01", "accounts", "never"],
  email_change: ["account", "KB-ACC-02", "accounts", "never"],
  account_takeover: ["account", "KB-SEC-01", "security", "security"],
  two_factor_lost: ["account", "KB-SEC-02", "security", "security"],
  data_deletion: ["account", "KB-ACC-03", "accounts", "security"],
  password_advice: ["account", "KB-SEC-03", "accounts", "never"],
  notification_settings: ["account", "KB-ACC-04", "accounts", "never"],
  error_403: ["technical", "KB-TEC-01", "technical", "enterprise_outage"],
  app_crash: ["technical", "KB-TEC-02", "technical", "never"],
  service_outage: ["technical", "KB-TEC-03", "technical", "enterprise_outage"],
  slow_performance: ["technical", "KB-TEC-04", "technical", "never"],
  integration_failure: ["technical", "KB-TEC-05", "technical", "enterprise_outage"],
  feature_request: ["general", "KB-GEN-02", "technical", "never"],
  shipping_policy_question: ["general", "KB-GEN-03", "logistics", "never"],
  profile_update: ["general", "KB-GEN-01", "accounts", "never"],
  gift_card: ["general", "KB-GEN-04", "billing", "never"],
  loyalty_points: ["general", "KB-GEN-05", "billing", "never"],
};
const ISSUE_OF_ARTICLE = Object.fromEntries(Object.entries(ISSUES).map(([id, info]) => [info[1], id]));

// Keyword rules, most specific first; the first issue with a matching phrase wins.
const KEYWORDS = [
  ["account_takeover", ["hacked", "compromised", "don't recognise", "don't recognize", "suspicious", "wasn't me"]],
  ["two_factor_lost", ["two-factor", "2fa", "authenticator", "verification code", "security code"]],
  ["password_advice", ["strong password", "same password", "password be", "password manager", "more secure", "good password", "better password", "short password"]],
  ["notification_settings", ["marketing emails", "newsletter", "promotional emails", "notifications", "offer emails", "fewer emails"]],
  ["gift_card", ["gift card", "gift voucher", "voucher"]],
  ["loyalty_points", ["points", "loyalty", "rewards"]],
  ["price_adjustment", ["cheaper", "on sale", "sale price", "price dropped", "price went down", "marked down", "your sale", "price adjustment", "reduced just after"]],
  ["international_shipping", ["abroad", "overseas", "countries", "country", "customs", "international", "duties"]],
  ["profile_update", ["profile", "phone number", "contact number", "mobile number", "display name", "my name"]],
  ["data_deletion", ["delete my account", "my data", "erase", "gdpr", "personal information"]],
  ["email_change", ["change the email", "login email", "email address", "different email"]],
  ["account_locked", ["locked", "blocked", "can't sign in", "disabled"]],
  ["refund_status", ["my refund", "refund still", "no refund", "money hasn't come back"]],
  ["return_label", ["return label", "shipping label", "postage"]],
  ["refund_request", ["refund", "money back", "reimburse"]],
  ["double_charge", ["twice", "double", "duplicate", "two times"]],
  ["wrong_amount", ["overcharged", "more than the price", "full price", "doesn't match"]],
  ["subscription_cancel", ["cancel", "subscription", "membership", "renew"]],
  ["invoice_request", ["invoice", "receipt"]],
  ["payment_failure", ["declined", "payment failed", "rejected", "card"]],
  ["lost_package", ["never came", "lost", "missing", "nothing arrived", "vanished"]],
  ["wrong_item", ["wrong item", "not what i ordered", "never ordered", "someone else's"]],
  ["damaged_item", ["damaged", "broken", "cracked", "smashed", "dented"]],
  ["address_change", ["address", "reroute", "new place", "to my office"]],
  ["delayed_delivery", ["late", "delayed", "hasn't arrived", "no sign", "still waiting"]],
  ["error_403", ["403", "forbidden", "access denied", "permission"]],
  ["integration_failure", ["api", "integration", "webhook", "syncing", "crm"]],
  ["service_outage", ["outage", "down", "offline", "won't load", "nothing works"]],
  ["app_crash", ["crash", "freezes", "closes", "shuts down"]],
  ["slow_performance", ["slow", "lags", "sluggish", "forever"]],
  ["shipping_policy_question", ["shipping", "express", "delivery options"]],
  ["feature_request", ["feature", "would be great", "could you add", "suggestion", "any plans"]],
];

// A help-desk checklist of facts to ask for, by category (never the hidden truth).
const FACTS_BY_CATEGORY = {
  billing: ["order_id", "amount"],
  delivery: ["order_id", "tracking_number"],
  refund: ["order_id", "amount"],
  account: ["account_email"],
  technical: ["error_code", "device_model"],
  general: [],
};

const enumName = (prefix, value) => `${prefix}${value.toUpperCase()}`;
const fromEnum = (prefix, name) => (name && name !== `${prefix}UNSPECIFIED` ? name.slice(prefix.length).toLowerCase() : "");

function openingText(obs) {
  // The customer's opening message; later turns are answers to our own questions.
  const opening = (obs.history.find((t) => t.speaker === "SPEAKER_CUSTOMER") || {}).text || obs.customer_message;
  return opening.toLowerCase();
}

// What the customer says of how much the problem holds it up (the policy's priority rule).
const IMPACT_CUES = {
  can_wait: ["no rush", "not urgent", "can wait", "no hurry", "take your time"],
  soon: ["in the next day or two", "within a day or two", "by the end of the week"],
  blocking: ["sorted today", "i have a deadline", "holding up my work", "stopping me from working"],
};
const PRIORITY_OF_IMPACT = { blocking: "urgent", soon: "high", normal: "medium", can_wait: "low" };

function statedImpact(obs) {
  const text = openingText(obs);
  for (const impact of ["can_wait", "soon", "blocking"]) {
    if (IMPACT_CUES[impact].some((cue) => text.includes(cue))) return impact;
  }
  return "normal";
}

function guessIssue(obs) {
  const text = openingText(obs);
  for (const [issue, words] of KEYWORDS) {
    if (words.some((w) => text.includes(w))) return issue;
  }
  const top = obs.kb_matches[0];
  if (top && ISSUE_OF_ARTICLE[top.article_id]) return ISSUE_OF_ARTICLE[top.article_id];
  return "feature_request";
}

function policyText(obs) {
  return obs.policy.join(" ").toLowerCase();
}

function mustEscalate(obs, issue) {
  const rule = ISSUES[issue][3];
  const tier = fromEnum("CUSTOMER_TIER_", obs.customer_tier);
  const policy = policyText(obs);
  if (rule === "security") return policy.includes("security incidents");
  if (rule === "enterprise_outage") return tier === "enterprise" && policy.includes("enterprise outages");
  if (rule === "over_cap") {
    const amount = obs.revealed_facts.find((f) => f.name === "amount");
    if (!amount) return false;
    // "Refunds above the tier's cap must be escalated ...: regular $100, premium $300, enterprise $1000."
    const match = new RegExp(`${tier} \\$(\\d+(?:\\.\\d+)?)`).exec(policy);
    const cap = match ? Number(match[1]) : 100;
    return Number(amount.value) > cap;
  }
  return false;
}

// The look-ups the rule makes on a task with tools, by the fact that names the record.
const LOOK_UPS = [
  ["order_id", "look_up_order"],
  ["account_email", "look_up_customer"],
];

class RulePolicy {
  constructor(taskId) {
    this.taskId = taskId;
    this.asked = false;
    this.answered = false;
    this.lookedUp = new Set();
  }

  // A UseTool action: the tool and its arguments as ordered {name, value} pairs.
  static useTool(tool, args) {
    return { use_tool: { tool, arguments: Object.entries(args).map(([name, value]) => ({ name, value })) } };
  }

  act(obs) {
    // Trust a triage already on the ticket (a colleague's, in action_selection).
    const issue = ISSUES[obs.issue_type] ? obs.issue_type : guessIssue(obs);
    const [category, article, department] = ISSUES[issue];
    if (obs.category === "ISSUE_CATEGORY_UNSPECIFIED") {
      const priority = PRIORITY_OF_IMPACT[statedImpact(obs)];
      return {
        classify_issue: {
          category: enumName("ISSUE_CATEGORY_", category),
          priority: enumName("PRIORITY_", priority),
          issue_type: issue,
        },
      };
    }
    if (this.taskId === "issue_classification") return { mark_resolved: { summary: "Classified." } };

    const have = new Set(obs.revealed_facts.map((f) => f.name));
    const wanted = [...FACTS_BY_CATEGORY[category]];
    // "Verify identity (ask for the account email) before account changes or refunds."
    if (category === "refund" && policyText(obs).includes("verify identity")) wanted.push("account_email");
    const tools = obs.allowed_actions.includes("use_tool");
    if (tools) wanted.push("account_email", "order_id"); // the records are found by these
    const missing = wanted.filter((f) => !have.has(f) && obs.requestable_fields.includes(f));
    if (!this.asked && missing.length > 0) {
      this.asked = true;
      return { ask_for_more_info: { fields: [...new Set(missing)], question: "Could you please share these details?" } };
    }
    if (tools) {
      // Read the records before answering: each record the customer's facts name, once.
      for (const [fact, tool] of LOOK_UPS) {
        const given = obs.revealed_facts.find((f) => f.name === fact);
        if (given && !this.lookedUp.has(tool)) {
          this.lookedUp.add(tool);
          return RulePolicy.useTool(tool, { [fact]: given.value });
        }
      }
    }
    if (mustEscalate(obs, issue)) {
      if (obs.assigned_department !== enumName("DEPARTMENT_", department)) {
        return { assign_department: { department: enumName("DEPARTMENT_", department), note: "Routing per policy." } };
      }
      if (!obs.escalated) {
        return { escalate_to_human: { reason: "I'm sorry for the trouble; a specialist will take this over." } };
      }
      return { mark_resolved: { summary: "Routed and escalated per policy." } };
    }
    if (!this.answered) {
      this.answered = true;
      const order = obs.revealed_facts.find((f) => f.name === "order_id");
      const about = order ? ` about ${order.value}` : "";
      return {
        respond_with_solution: {
          message: `Thank you for reaching out${about}, and I'm sorry for the trouble. Please follow the steps in our help article ${article}; I'm happy to help if anything is unclear.`,
          article_id: article,
        },
      };
    }
    return { mark_resolved: { summary: "Answered with the help article." } };
  }
}

// ---- episodes ----

async function playTask(env, grader, task, opts) {
  const split = enumName("SPLIT_", opts.split);
  const reset = await call(env, "Reset", { task_id: task.task_id, split, seed: String(opts.seed) }, opts.deadlineMs);
  let obs = reset.observation;
  let token = reset.state_token; // opaque signed bytes (a Buffer): sent back unchanged
  if (!Buffer.isBuffer(token) || token.length === 0) throw new Error(`Reset(${task.task_id}) gave no state token`);
  const policy = new RulePolicy(task.task_id);
  const actions = [];
  const rewards = [];
  const toolResults = [];
  let done = false;
  let last = null;
  while (!done) {
    if (actions.length >= task.max_steps) throw new Error(`${task.task_id}: episode did not end in ${task.max_steps} steps`);
    const action = policy.act(obs);
    actions.push(action);
    last = await call(env, "Step", { state_token: token, action }, opts.deadlineMs);
    rewards.push(last.reward);
    obs = last.observation;
    token = last.state_token;
    done = last.terminated || last.truncated;
    if (action.use_tool) {
      const result = obs.tool_result;
      if (!result || result.tool !== action.use_tool.tool) throw new Error(`${task.task_id}: no tool_result for ${action.use_tool.tool}`);
      // The data travels as canonical JSON, so any language reads it.
      toolResults.push({ step: actions.length, tool: result.tool, status: result.status, message: result.message, data: JSON.parse(result.data_json || "{}") });
    } else if (obs.tool_result) {
      throw new Error(`${task.task_id}: a tool_result after ${Object.keys(action)[0]}`);
    }
  }
  // The server's own record of the episode: the trajectory it holds must be ours.
  const { state } = await call(env, "State", { state_token: token }, opts.deadlineMs);
  if (state.actions.length !== actions.length || state.step !== actions.length) {
    throw new Error(`${task.task_id}: State reports ${state.actions.length} actions, we sent ${actions.length}`);
  }
  for (let i = 0; i < actions.length; i += 1) {
    if (state.actions[i].kind !== Object.keys(actions[i])[0]) {
      throw new Error(`${task.task_id}: State action ${i + 1} is ${state.actions[i].kind}`);
    }
  }

  const trajectory = {
    task_id: task.task_id,
    split,
    seed: String(opts.seed),
    actions,
    episode_id: reset.episode_id,
  };
  const grade = await call(grader, "Grade", { trajectory }, opts.deadlineMs);
  if (grade.steps !== actions.length) throw new Error(`${task.task_id}: grader replayed ${grade.steps} steps`);
  return {
    task_id: task.task_id,
    split: opts.split,
    seed: opts.seed,
    episode_id: reset.episode_id,
    steps: actions.length,
    rewards,
    cumulative_reward: last.cumulative_reward,
    terminated: last.terminated,
    truncated: last.truncated,
    score: grade.score,
    passed: grade.passed,
    grader_version: grade.grader_version,
    components: Object.fromEntries(grade.components.map((c) => [c.name, c.score])),
    allowed_actions: task.allowed_actions,
    tool_results: toolResults,
    // Each action as {kind, params}: the Action oneof field and its message, enums by name.
    actions: actions.map((a) => {
      const kind = Object.keys(a)[0];
      return { kind, params: a[kind] };
    }),
  };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const api = loadApi(opts.protos);
  const creds = grpc.credentials.createInsecure();
  const env = new api.EnvService(opts.env, creds);
  const grader = new api.GraderService(opts.grader, creds);
  try {
    const { tasks } = await call(env, "ListTasks", {}, opts.deadlineMs);
    if (tasks.length === 0) throw new Error("ListTasks returned no tasks");
    const chosen = opts.tasks.length ? tasks.filter((t) => opts.tasks.includes(t.task_id)) : tasks;
    if (chosen.length !== (opts.tasks.length || tasks.length)) throw new Error(`unknown task in --tasks ${opts.tasks}`);
    for (const task of chosen) {
      const result = await playTask(env, grader, task, opts);
      process.stdout.write(`${JSON.stringify(result)}\n`);
    }
  } finally {
    env.close();
    grader.close();
  }
}

main().catch((err) => {
  process.stderr.write(`error: ${err.message}\n`);
  process.exitCode = 1;
});
