"""TRL integration (training.trl_env): the environment_factory classes read by TRL's own machinery,
every task's oracle episode played through their methods, and one real GRPO step.

- The tools: a GRPOTrainer built with `environment_factory(ALL_TASK_IDS)` (TRL's {name: class}
  mapping) probes each class and keeps the methods it offers as tools; transformers' get_json_schema
  (what apply_chat_template runs on them) must give each one the name, parameters, enums and
  required list of the matching `supportenv.llm.action_tools` function.
- The episodes: the oracle's actions, turned into the calls a tool-calling model makes, drive each
  task through the class; the text each call returns is the next observation's prompt, and
  `get_reward()` is the library's grade of the same actions played on SupportEnv.
- The step: a tiny randomly initialised Qwen2 (from a config) with a byte-level BPE tokenizer built
  here from the environment's own prompts (nothing downloaded) and Qwen2.5's chat template that TRL
  ships. Its attention and MLP outputs start at zero, so it is a bigram model at first, which a few
  hundred optimiser steps on four tokens teach to answer an assistant turn with one of two triages
  then closing the ticket, as tool calls. GRPOTrainer (the {name: class} factory, one ticket of
  issue_classification and one of expert_resolution) then runs one step: its rollouts call the
  environments' methods, each class's logged reward is its rollouts' grades, and the step updates
  the model.
"""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("trl")
pytest.importorskip("torch")

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
from transformers.utils import get_json_schema
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import qwen2_5_chat_template

from baseline_agent.policies import make_policy
from supportenv.env import SupportEnv
from supportenv.llm import action_tools, parse_tool_call, tool_call_of, user_prompt
from supportenv.tasks import ALL_TASK_IDS, EXPERT_TASK_ID
from training.trl_env import (
    ENVIRONMENTS,
    EXPERT_ENV,
    SUPPORT_ENV,
    ExpertSupportTicketEnv,
    SupportTicketEnv,
    environment_factory,
    environment_name,
    support_dataset,
    support_rows,
)

pytestmark = [
    pytest.mark.timeout(300),
    # transformers 5.25 deprecates the gradient_checkpointing names that TRL 1.16 still calls.
    pytest.mark.filterwarnings("ignore:.*(gradient|is_gradient)_checkpointing.*:FutureWarning"),
]

# The scripted replies: one of two triages (so the rollouts' grades differ and GRPO has an advantage to
# follow), then closing the ticket.
TRIAGES = [
    {"name": "classify_issue", "arguments": {"category": "billing", "priority": "high", "issue_type": "double_charge"}},
    {"name": "classify_issue", "arguments": {"category": "technical", "priority": "low", "issue_type": "app_crash"}},
]
CLOSE = {"name": "mark_resolved", "arguments": {"summary": "Triaged."}}
# One token per tool-call block, so that a bigram model can say them in turn.
TRIAGE_BLOCKS = ["<tool_call>\n" + json.dumps(call) + "\n</tool_call>" for call in TRIAGES]
CLOSE_BLOCK = "\n<tool_call>\n" + json.dumps(CLOSE) + "\n</tool_call>"
SCRIPTED_REPLIES = [triage + CLOSE_BLOCK + "<|im_end|>" for triage in TRIAGE_BLOCKS]
# One ticket of a task without the help desk and one with it: TRL routes each row to its class.
GRPO_TASKS = ["issue_classification", EXPERT_TASK_ID]


@pytest.fixture(autouse=True)
def _quiet_trl(monkeypatch):
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is marked experimental


@pytest.fixture(scope="module")
def tokenizer():
    """A byte-level BPE tokenizer trained here on the environment's prompts (Qwen's special tokens,
    Qwen2.5's chat template, which TRL knows how to parse tool calls from)."""
    rows = support_rows(ALL_TASK_IDS, "train", range(2))
    corpus = [row["prompt"][0]["content"] for row in rows]
    corpus += [ENVIRONMENTS[row["environment"]]().reset(**row) for row in rows]
    corpus += [json.dumps(action_tools(EXPERT_TASK_ID)), qwen2_5_chat_template]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    bpe.train_from_iterator(
        corpus,
        trainers.BpeTrainer(vocab_size=2000, special_tokens=special, initial_alphabet=alphabet, show_progress=False),
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    fast.add_tokens([*TRIAGE_BLOCKS, CLOSE_BLOCK])
    fast.chat_template = qwen2_5_chat_template
    return fast


def tiny_model(tokenizer) -> Qwen2ForCausalLM:
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32768,  # a prompt with the tools' schemas is some 6,000 tokens
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def grpo_config(output_dir, **overrides) -> GRPOConfig:
    settings = dict(
        output_dir=str(output_dir),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=4096,  # the tool messages (observations) count as completion
        max_tool_calling_iterations=1,
        max_steps=1,
        learning_rate=1e-4,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        save_strategy="no",
        seed=0,
    )
    return GRPOConfig(**(settings | overrides))


def tool_methods(trainer: GRPOTrainer, name: str | None) -> dict[str, object]:
    """The bound methods TRL offers as tools for the environment of this name."""
    return {method.__name__: method for method in trainer._env_tools[name]}


# ---- the tools, as TRL reads them ----


def test_trl_offers_every_action_and_tool_with_the_library_schema(tokenizer, tmp_path):
    factory = environment_factory(ALL_TASK_IDS)
    assert factory == {SUPPORT_ENV: SupportTicketEnv, EXPERT_ENV: ExpertSupportTicketEnv}
    dataset = support_dataset(ALL_TASK_IDS, "train", range(1))
    assert dataset.column_names == ["prompt", "task_id", "split", "seed", "environment"]
    trainer = GRPOTrainer(
        model=tiny_model(tokenizer),
        args=grpo_config(tmp_path),
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=factory,
    )
    assert sorted(trainer.reward_func_names) == ["ExpertSupportTicketEnv", "SupportTicketEnv"]  # both own their reward
    for name, task_id in ((SUPPORT_ENV, "end_to_end_resolution"), (EXPERT_ENV, EXPERT_TASK_ID)):
        offered = tool_methods(trainer, name)
        expected = {tool["function"]["name"]: tool["function"] for tool in action_tools(task_id)}
        assert sorted(offered) == sorted(expected), name
        for function_name, method in offered.items():
            schema = get_json_schema(method)["function"]
            library = expected[function_name]
            assert schema["description"] == library["description"], function_name
            parameters = {
                param: {k: v for k, v in spec.items() if k not in ("description", "nullable")}
                for param, spec in schema["parameters"]["properties"].items()
            }
            assert parameters == library["parameters"]["properties"], function_name
            assert schema["parameters"].get("required", []) == library["parameters"]["required"], function_name
            assert all(spec["description"] for spec in schema["parameters"]["properties"].values()), function_name


def test_tool_call_of_inverts_parse_tool_call():
    for task_id in ALL_TASK_IDS:
        oracle = make_policy("oracle")
        oracle.begin(task_id, "train", 3)
        env = SupportEnv(task_id, "train", 3)
        obs, done = env.reset(), False
        while not done:
            action = oracle.act(obs)
            assert parse_tool_call(*tool_call_of(action)) == action
            obs, _, done, _ = env.step(action)


# ---- every task's episode through the methods ----


@pytest.mark.parametrize("task_id", ALL_TASK_IDS)
@pytest.mark.parametrize("seed", [0, 7])
def test_oracle_episode_through_the_methods_earns_the_library_grade(task_id, seed):
    cls = ENVIRONMENTS[environment_name(task_id)]
    row = support_rows([task_id], "train", [seed])[0]
    environment = cls()
    text = environment.reset(**row)  # as TRL calls it: the whole row, prompt and environment included
    library = SupportEnv(task_id, "train", seed)
    obs = library.reset()
    assert text == user_prompt(obs, tool_calls=True) and text.endswith("call one function.")
    assert (
        row["prompt"][0]["role"] == "system"
        and "Output format: take each action by calling" in (row["prompt"][0]["content"])
    )
    assert "JSON object" not in row["prompt"][0]["content"].split("Output format:")[-1]
    oracle = make_policy("oracle")
    oracle.begin(task_id, "train", seed)
    done = False
    while not done:
        action = oracle.act(environment.observation)
        name, arguments = tool_call_of(action)
        text = getattr(environment, name)(**arguments)
        obs, reward, done, _ = library.step(action)
        assert environment.step_rewards[-1] == reward
        if not done:
            assert text == user_prompt(obs, tool_calls=True)
    grade = library.grade()
    assert environment.done and "The episode is over" in text and f"{grade.score:.2f}" in text
    assert environment.get_reward() == environment.reward == grade.score == 1.0
    with pytest.raises(ValueError, match="the episode is over"):
        environment.mark_resolved()


def test_bad_values_are_penalised_steps_and_wrong_classes_refuse_the_row():
    environment = SupportTicketEnv()
    environment.reset(task_id="end_to_end_resolution", split="validation", seed=1)
    text = environment.classify_issue(category="nonsense", priority="high", issue_type="double_charge")
    assert environment.step_rewards[-1] < 0 and "classify_issue needs a category" in text
    text = environment.respond_with_solution(message="")
    assert environment.step_rewards[-1] < 0 and "respond_with_solution needs a message" in text
    with pytest.raises(TypeError):  # no step: TRL reports it as the tool's error
        environment.classify_issue(category="billing")
    assert len(environment.step_rewards) == 2
    with pytest.raises(ValueError, match="ExpertSupportTicketEnv"):
        SupportTicketEnv().reset(task_id=EXPERT_TASK_ID, split="train", seed=0)
    with pytest.raises(ValueError, match="SupportTicketEnv"):
        ExpertSupportTicketEnv().reset(task_id="issue_classification", split="train", seed=0)
    with pytest.raises(ValueError, match="reset"):
        SupportTicketEnv().mark_resolved()


# ---- one real GRPO step ----


def teach_scripted_replies(model: Qwen2ForCausalLM, tokenizer) -> None:
    """Make the bigram model answer an assistant turn with either scripted reply, half the time each:
    attention and MLP outputs start at zero (so the next token depends on the last one only), then
    the embeddings and the head learn the two four-token replies."""
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
    trained = [model.model.embed_tokens.weight, model.lm_head.weight]
    last_prompt_token = tokenizer("<|im_start|>assistant\n", add_special_tokens=False)["input_ids"][-1:]
    replies = [tokenizer(reply, add_special_tokens=False)["input_ids"] for reply in SCRIPTED_REPLIES]
    assert [len(reply) for reply in replies] == [3, 3]
    ids = torch.tensor([last_prompt_token + reply for reply in replies])
    labels = ids.clone()
    labels[:, 0] = -100
    optimiser = torch.optim.AdamW(trained, lr=5e-2)
    for _ in range(300):
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
    model.zero_grad(set_to_none=True)


def test_one_grpo_step_rewards_the_rollouts_with_the_environment_grade(tokenizer, tmp_path):
    model = tiny_model(tokenizer)
    teach_scripted_replies(model, tokenizer)
    trainer = GRPOTrainer(
        model=model,
        args=grpo_config(tmp_path, per_device_train_batch_size=4, num_generations=2),
        train_dataset=support_dataset(GRPO_TASKS, "train", range(1)),
        processing_class=tokenizer,
        environment_factory=environment_factory(GRPO_TASKS),
    )
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    trainer.train()
    assert trainer.state.global_step == 1
    logged = trainer.state.log_history[0]
    rollouts = trainer.environments
    assert sorted(e.env.task_id for e in rollouts) == sorted(GRPO_TASKS * 2)
    assert all(type(e) is ENVIRONMENTS[environment_name(e.env.task_id)] for e in rollouts)
    assert logged["tools/call_frequency"] > 0
    assert all(e.step_rewards for e in rollouts), "every rollout called the environment"
    grades = [e.get_reward() for e in rollouts]
    for cls in (SupportTicketEnv, ExpertSupportTicketEnv):  # one reward column per class, from its rollouts
        own = [e.get_reward() for e in rollouts if type(e) is cls]
        assert math.isclose(logged[f"rewards/{cls.__name__}/mean"], sum(own) / len(own), abs_tol=1e-6)
    assert math.isclose(logged["reward"], sum(grades) / len(grades), abs_tol=1e-6)
    # The two triages of the issue_classification ticket earn different grades, so that group's
    # advantages are not zero and the step learns.
    triage_grades = {e.get_reward() for e in rollouts if e.env.task_id == GRPO_TASKS[0]}
    assert len(triage_grades) == 2 and logged["reward_std"] > 0 and logged["grad_norm"] > 0
    assert any(not torch.equal(p.detach(), before[name]) for name, p in model.named_parameters())
