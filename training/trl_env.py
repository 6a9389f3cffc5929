"""The environment for TRL's `GRPOTrainer(environment_factory=...)`: a ticket played by tool calls.

TRL makes one instance per rollout, calls `reset(**row)` with the dataset row (task_id, split, seed)
and appends the text it returns (the first observation, as `supportenv.llm.user_prompt` words it) to
the row's last user message. Every public method is a tool whose JSON schema transformers builds
from the method's type hints and Google-style docstring; the model's call runs one environment step
and the text returned (the step's reward and feedback inside the next observation's prompt) is the
tool message it reads next. `get_reward()` is the rollout's reward: the finished conversation's grade
(`SupportEnv.grade().score`), the score the benchmark reports.

- `SupportTicketEnv`: the eight actions (issue_classification, action_selection, end_to_end_resolution).
- `ExpertSupportTicketEnv`: those and the help desk's tools (expert_resolution), one method per tool,
  named by the tool as `supportenv.llm.action_tools` names them. One method per tool rather than a
  `use_tool(tool, arguments)` method because transformers can only type `arguments` as an opaque
  object: the model would see neither a tool's argument names nor which are required.
- `support_dataset(tasks, split, seeds)`: the rows TRL samples; `environment_factory(tasks)`: the
  class, or TRL's {name: class} mapping when the tasks mix the two, so each prompt offers only its
  task's tools.

A call that cannot be applied raises (after the episode ended: ValueError; without a required
argument or with an unknown one: Python's TypeError): TRL turns a tool's exception into an
{"error": ...} tool message and counts a tool failure. A call with bad values (an unknown category,
an empty message) is the environment's penalised invalid step, as for any agent, and its feedback
says what was wrong.

Imports neither torch nor trl; `datasets` only to build the dataset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from supportenv.catalog import CATEGORIES, DEPARTMENTS, ISSUE_TYPE_IDS, PRIORITIES, REQUESTABLE_FIELDS, TOOL_KIND
from supportenv.env import SupportEnv
from supportenv.episode import Observation
from supportenv.llm import (
    ARTICLE_IDS,
    TOOL_CALL_REPLY_LINE,
    action_tools,
    parse_tool_call,
    system_prompt,
    user_prompt,
)
from supportenv.tasks import ALL_TASK_IDS, EXPERT_TASK_ID, get_task

if TYPE_CHECKING:
    from datasets import Dataset

# The enums of the actions' parameters, as Literal types so that transformers' schema lists the values.
Category = Literal[CATEGORIES]  # type: ignore[valid-type]
Priority = Literal[PRIORITIES]  # type: ignore[valid-type]
IssueType = Literal[ISSUE_TYPE_IDS]  # type: ignore[valid-type]
Field = Literal[REQUESTABLE_FIELDS]  # type: ignore[valid-type]
ArticleId = Literal[ARTICLE_IDS]  # type: ignore[valid-type]
Department = Literal[DEPARTMENTS]  # type: ignore[valid-type]

# Names of the environment classes in TRL's {name: factory} mapping, which the dataset's rows carry.
SUPPORT_ENV, EXPERT_ENV = "support_ticket", "expert_support_ticket"

_F = TypeVar("_F", bound=Callable[..., str])


# The functions supportenv.llm offers tool-calling models, by name: each method's description is its function's.
_LIBRARY_FUNCTIONS = {tool["function"]["name"]: tool["function"] for tool in action_tools(EXPERT_TASK_ID)}


def _described(name: str) -> Callable[[_F], _F]:
    """Put the library's description of this function before the method's Args section, so that the
    schema transformers builds says what `supportenv.llm.action_tools` says."""

    def decorate(method: _F) -> _F:
        method.__doc__ = _LIBRARY_FUNCTIONS[name]["description"] + "\n" + (method.__doc__ or "")
        return method

    return decorate


def _takes_tools(task_id: str) -> bool:
    return TOOL_KIND in get_task(task_id).allowed_actions


class SupportTicketEnv:
    """One support ticket, worked by tool calls: TRL's environment_factory for the tasks without the
    help desk's tools. Each public method is an action; `reset(**row)` starts the row's episode."""

    def __init__(self) -> None:
        self.env: SupportEnv | None = None
        self.observation: Observation | None = None
        self.done = False
        self.step_rewards: list[float] = []

    # ---- TRL's contract: reset and the reward (neither is a tool) ----

    def reset(self, task_id: str, split: str = "train", seed: int = 0, **row: Any) -> str:
        """Start the row's episode and return the first observation's prompt (TRL appends it to the
        row's user message). The row's other columns (its prompt, its environment name) are ignored."""
        if _takes_tools(task_id) != isinstance(self, ExpertSupportTicketEnv):
            wanted = ExpertSupportTicketEnv if _takes_tools(task_id) else SupportTicketEnv
            raise ValueError(
                f"task {task_id!r} is played with {wanted.__name__}, not {type(self).__name__}: "
                "use environment_factory(tasks) to pick the class"
            )
        self.env = SupportEnv(task_id, split, int(seed))
        self.observation = self.env.reset()
        self.done = False
        self.step_rewards = []
        return user_prompt(self.observation, tool_calls=True)

    def get_reward(self) -> float:
        """The rollout's reward: the grade of the conversation so far (of the finished one, once the
        model closed it or ran out of steps), 0..1."""
        if self.env is None:
            raise ValueError("reset() was not called")
        return self.env.grade().score

    @property
    def reward(self) -> float:
        return self.get_reward()

    # ---- the step every tool takes ----

    def _act(self, name: str, arguments: dict[str, Any]) -> str:
        if self.env is None or self.observation is None:
            raise ValueError("no episode: reset() was not called")
        if self.done:
            raise ValueError("the episode is over: the ticket was closed or the step budget ran out")
        obs = self.observation
        action = parse_tool_call(name, {k: v for k, v in arguments.items() if v is not None}, obs.allowed_actions)
        obs, reward, self.done, info = self.env.step(action)
        self.observation = obs
        self.step_rewards.append(reward)
        if not self.done:
            return user_prompt(obs, tool_calls=True)
        how = "closed" if info["terminated"] else "out of steps"
        grade = self.env.grade()
        verdict = "passed" if grade.passed else "not passed"
        return user_prompt(obs, tool_calls=True).removesuffix(TOOL_CALL_REPLY_LINE) + (
            f"The episode is over ({how}); the conversation's grade is {grade.score:.2f} ({verdict}). "
            "Call no more functions."
        )

    # ---- the eight actions ----

    @_described("classify_issue")
    def classify_issue(self, category: Category, priority: Priority, issue_type: IssueType) -> str:
        """
        Args:
            category: The ticket's category.
            priority: The ticket's priority, as the policy gives it from what the customer says.
            issue_type: The ticket's issue type (of its first issue), one of the category's.

        Returns:
            Your reward and feedback, then the ticket as it stands.
        """
        return self._act("classify_issue", {"category": category, "priority": priority, "issue_type": issue_type})

    @_described("ask_for_more_info")
    def ask_for_more_info(self, fields: list[Field], question: str = "") -> str:
        """
        Args:
            fields: The facts to ask the customer for, by field name.
            question: The question the customer reads (optional).

        Returns:
            Your reward and feedback, then the ticket as it stands (with the customer's reply).
        """
        return self._act("ask_for_more_info", {"fields": fields, "question": question})

    @_described("respond_with_solution")
    def respond_with_solution(self, message: str, article_id: ArticleId | None = None) -> str:
        """
        Args:
            message: The answer the customer reads: the solution in words.
            article_id: The knowledge-base article the solution comes from.

        Returns:
            Your reward and feedback, then the ticket as it stands (with the customer's reply).
        """
        return self._act("respond_with_solution", {"message": message, "article_id": article_id})

    @_described("suggest_knowledge_base")
    def suggest_knowledge_base(self, article_id: ArticleId) -> str:
        """
        Args:
            article_id: The knowledge-base article to send.

        Returns:
            Your reward and feedback, then the ticket as it stands.
        """
        return self._act("suggest_knowledge_base", {"article_id": article_id})

    @_described("assign_department")
    def assign_department(self, department: Department, note: str = "") -> str:
        """
        Args:
            department: The department to route the ticket to.
            note: An internal note for the department (the customer does not see it).

        Returns:
            Your reward and feedback, then the ticket as it stands.
        """
        return self._act("assign_department", {"department": department, "note": note})

    @_described("escalate_to_human")
    def escalate_to_human(self, reason: str = "") -> str:
        """
        Args:
            reason: What you tell the customer about the hand-over.

        Returns:
            Your reward and feedback, then the ticket as it stands.
        """
        return self._act("escalate_to_human", {"reason": reason})

    @_described("request_callback")
    def request_callback(self, reason: str = "") -> str:
        """
        Args:
            reason: What you tell the customer about the callback.

        Returns:
            Your reward and feedback, then the ticket as it stands.
        """
        return self._act("request_callback", {"reason": reason})

    @_described("mark_resolved")
    def mark_resolved(self, summary: str = "") -> str:
        """
        Args:
            summary: An internal note on how the ticket was resolved (the customer does not see it).

        Returns:
            Your reward and feedback, the customer's last word, and the conversation's grade.
        """
        return self._act("mark_resolved", {"summary": summary})


class ExpertSupportTicketEnv(SupportTicketEnv):
    """The expert_resolution task's environment: the eight actions and the help desk's tools, each
    its own method named by the tool (its arguments are strings)."""

    @_described("look_up_customer")
    def look_up_customer(self, account_email: str) -> str:
        """
        Args:
            account_email: The account's email address.

        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("look_up_customer", {"account_email": account_email})

    @_described("look_up_order")
    def look_up_order(self, order_id: str) -> str:
        """
        Args:
            order_id: The order's id, e.g. ORD-123456.

        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("look_up_order", {"order_id": order_id})

    @_described("look_up_payments")
    def look_up_payments(self, account_email: str) -> str:
        """
        Args:
            account_email: The account's email address.

        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("look_up_payments", {"account_email": account_email})

    @_described("check_service_status")
    def check_service_status(self) -> str:
        """
        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("check_service_status", {})

    @_described("verify_identity")
    def verify_identity(self) -> str:
        """
        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("verify_identity", {})

    @_described("issue_refund")
    def issue_refund(self, order_id: str, amount: str) -> str:
        """
        Args:
            order_id: The order to refund.
            amount: The amount to refund, in dollars, e.g. "12.50".

        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("issue_refund", {"order_id": order_id, "amount": amount})

    @_described("update_address")
    def update_address(self, order_id: str, new_address: str) -> str:
        """
        Args:
            order_id: The order to ship to the new address.
            new_address: The new shipping address.

        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("update_address", {"order_id": order_id, "new_address": new_address})

    @_described("cancel_subscription")
    def cancel_subscription(self, subscription_id: str) -> str:
        """
        Args:
            subscription_id: The subscription to cancel.

        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("cancel_subscription", {"subscription_id": subscription_id})

    @_described("send_password_reset")
    def send_password_reset(self, account_email: str) -> str:
        """
        Args:
            account_email: The account's email address.

        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("send_password_reset", {"account_email": account_email})

    @_described("reship_order")
    def reship_order(self, order_id: str) -> str:
        """
        Args:
            order_id: The order to send again.

        Returns:
            Your reward and feedback, then the ticket with the tool's result.
        """
        return self._act("reship_order", {"order_id": order_id})


ENVIRONMENTS: dict[str, type[SupportTicketEnv]] = {SUPPORT_ENV: SupportTicketEnv, EXPERT_ENV: ExpertSupportTicketEnv}


def environment_name(task_id: str) -> str:
    """The name, in `ENVIRONMENTS`, of the class that plays this task."""
    return EXPERT_ENV if _takes_tools(task_id) else SUPPORT_ENV


def environment_factory(
    tasks: Sequence[str] = ALL_TASK_IDS,
) -> type[SupportTicketEnv] | dict[str, type[SupportTicketEnv]]:
    """GRPOTrainer's environment_factory for these tasks: the one class that plays them all, or, when
    they mix tasks with and without tools, TRL's {name: class} mapping (the rows' `environment`
    column picks the class, so each prompt offers its own task's tools only)."""
    names = sorted({environment_name(task_id) for task_id in tasks})
    if not names:
        raise ValueError("no tasks")
    return ENVIRONMENTS[names[0]] if len(names) == 1 else {name: ENVIRONMENTS[name] for name in names}


def support_rows(tasks: Sequence[str], split: str, seeds: Iterable[int]) -> list[dict[str, Any]]:
    """One row per (task, seed): TRL's conversational `prompt` (the task's system prompt, and a user
    message that `reset` fills with the first observation) and the columns `reset(**row)` reads."""
    seeds = list(seeds)
    rows = []
    for task_id in tasks:
        get_task(task_id)  # an unknown task fails here, not in the middle of training
        for seed in seeds:
            first = SupportEnv(task_id, split, seed).reset()  # the system prompt says the ticket's policy
            prompt = [
                {"role": "system", "content": system_prompt(first, tool_calls=True)},
                {"role": "user", "content": ""},
            ]
            rows.append(
                {
                    "prompt": prompt,
                    "task_id": task_id,
                    "split": split,
                    "seed": seed,
                    "environment": environment_name(task_id),
                }
            )
    return rows


def support_dataset(
    tasks: Sequence[str] = ALL_TASK_IDS, split: str = "train", seeds: Iterable[int] = range(64)
) -> Dataset:
    """The rows of `support_rows` as a `datasets.Dataset` for GRPOTrainer's train_dataset."""
    from datasets import Dataset

    return Dataset.from_list(support_rows(tasks, split, seeds))
