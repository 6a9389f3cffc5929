from supportenv.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListTasksRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_types_pb2.TaskInfo]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_types_pb2.TaskInfo, _Mapping]]] = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ("task_id", "split", "seed", "episode_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    split: _types_pb2.Split
    seed: int
    episode_id: str
    def __init__(self, task_id: _Optional[str] = ..., split: _Optional[_Union[_types_pb2.Split, str]] = ..., seed: _Optional[int] = ..., episode_id: _Optional[str] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ("observation", "state_token", "episode_id", "task")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    observation: _types_pb2.Observation
    state_token: bytes
    episode_id: str
    task: _types_pb2.TaskInfo
    def __init__(self, observation: _Optional[_Union[_types_pb2.Observation, _Mapping]] = ..., state_token: _Optional[bytes] = ..., episode_id: _Optional[str] = ..., task: _Optional[_Union[_types_pb2.TaskInfo, _Mapping]] = ...) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("state_token", "action", "next_episode")
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    NEXT_EPISODE_FIELD_NUMBER: _ClassVar[int]
    state_token: bytes
    action: _types_pb2.Action
    next_episode: ResetRequest
    def __init__(self, state_token: _Optional[bytes] = ..., action: _Optional[_Union[_types_pb2.Action, _Mapping]] = ..., next_episode: _Optional[_Union[ResetRequest, _Mapping]] = ...) -> None: ...

class StepResponse(_message.Message):
    __slots__ = ("observation", "reward", "terminated", "truncated", "reward_breakdown", "state_token", "cumulative_reward", "next_episode")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    REWARD_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    REWARD_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CUMULATIVE_REWARD_FIELD_NUMBER: _ClassVar[int]
    NEXT_EPISODE_FIELD_NUMBER: _ClassVar[int]
    observation: _types_pb2.Observation
    reward: float
    terminated: bool
    truncated: bool
    reward_breakdown: _containers.RepeatedCompositeFieldContainer[_types_pb2.RewardComponent]
    state_token: bytes
    cumulative_reward: float
    next_episode: ResetResponse
    def __init__(self, observation: _Optional[_Union[_types_pb2.Observation, _Mapping]] = ..., reward: _Optional[float] = ..., terminated: _Optional[bool] = ..., truncated: _Optional[bool] = ..., reward_breakdown: _Optional[_Iterable[_Union[_types_pb2.RewardComponent, _Mapping]]] = ..., state_token: _Optional[bytes] = ..., cumulative_reward: _Optional[float] = ..., next_episode: _Optional[_Union[ResetResponse, _Mapping]] = ...) -> None: ...

class StateRequest(_message.Message):
    __slots__ = ("state_token",)
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    state_token: bytes
    def __init__(self, state_token: _Optional[bytes] = ...) -> None: ...

class EpisodeState(_message.Message):
    __slots__ = ("episode_id", "task_id", "split", "seed", "step", "max_steps", "terminated", "truncated", "cumulative_reward", "actions", "rewards", "observation", "identity_verified", "changes")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    CUMULATIVE_REWARD_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    IDENTITY_VERIFIED_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    task_id: str
    split: _types_pb2.Split
    seed: int
    step: int
    max_steps: int
    terminated: bool
    truncated: bool
    cumulative_reward: float
    actions: _containers.RepeatedCompositeFieldContainer[_types_pb2.Action]
    rewards: _containers.RepeatedScalarFieldContainer[float]
    observation: _types_pb2.Observation
    identity_verified: bool
    changes: _containers.RepeatedCompositeFieldContainer[RecordChange]
    def __init__(self, episode_id: _Optional[str] = ..., task_id: _Optional[str] = ..., split: _Optional[_Union[_types_pb2.Split, str]] = ..., seed: _Optional[int] = ..., step: _Optional[int] = ..., max_steps: _Optional[int] = ..., terminated: _Optional[bool] = ..., truncated: _Optional[bool] = ..., cumulative_reward: _Optional[float] = ..., actions: _Optional[_Iterable[_Union[_types_pb2.Action, _Mapping]]] = ..., rewards: _Optional[_Iterable[float]] = ..., observation: _Optional[_Union[_types_pb2.Observation, _Mapping]] = ..., identity_verified: _Optional[bool] = ..., changes: _Optional[_Iterable[_Union[RecordChange, _Mapping]]] = ...) -> None: ...

class RecordChange(_message.Message):
    __slots__ = ("tool", "target", "value")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    tool: str
    target: str
    value: str
    def __init__(self, tool: _Optional[str] = ..., target: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class StateResponse(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: EpisodeState
    def __init__(self, state: _Optional[_Union[EpisodeState, _Mapping]] = ...) -> None: ...

class ResetBatchRequest(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[ResetRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[ResetRequest, _Mapping]]] = ...) -> None: ...

class ResetBatchResponse(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[ResetResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[ResetResponse, _Mapping]]] = ...) -> None: ...

class StepBatchRequest(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[StepRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[StepRequest, _Mapping]]] = ...) -> None: ...

class StepBatchResponse(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[StepResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[StepResponse, _Mapping]]] = ...) -> None: ...

class SessionRequest(_message.Message):
    __slots__ = ("reset", "step", "state", "resume", "want_token", "next_episode")
    RESET_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    WANT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NEXT_EPISODE_FIELD_NUMBER: _ClassVar[int]
    reset: ResetRequest
    step: _types_pb2.Action
    state: StateRequest
    resume: bytes
    want_token: bool
    next_episode: ResetRequest
    def __init__(self, reset: _Optional[_Union[ResetRequest, _Mapping]] = ..., step: _Optional[_Union[_types_pb2.Action, _Mapping]] = ..., state: _Optional[_Union[StateRequest, _Mapping]] = ..., resume: _Optional[bytes] = ..., want_token: _Optional[bool] = ..., next_episode: _Optional[_Union[ResetRequest, _Mapping]] = ...) -> None: ...

class SessionResponse(_message.Message):
    __slots__ = ("reset", "step", "state")
    RESET_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    reset: ResetResponse
    step: StepResponse
    state: StateResponse
    def __init__(self, reset: _Optional[_Union[ResetResponse, _Mapping]] = ..., step: _Optional[_Union[StepResponse, _Mapping]] = ..., state: _Optional[_Union[StateResponse, _Mapping]] = ...) -> None: ...

class DescribeEnvironmentRequest(_message.Message):
    __slots__ = ("state_token",)
    STATE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    state_token: bytes
    def __init__(self, state_token: _Optional[bytes] = ...) -> None: ...

class DescribeEnvironmentResponse(_message.Message):
    __slots__ = ("tasks", "actions", "use_tool", "tools", "knowledge_base", "issue_types", "categories", "priorities", "departments", "requestable_fields", "policy_variants", "rewards", "prompt", "system_prompt", "user_prompt")
    TASKS_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    USE_TOOL_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_BASE_FIELD_NUMBER: _ClassVar[int]
    ISSUE_TYPES_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    PRIORITIES_FIELD_NUMBER: _ClassVar[int]
    DEPARTMENTS_FIELD_NUMBER: _ClassVar[int]
    REQUESTABLE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    POLICY_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_PROMPT_FIELD_NUMBER: _ClassVar[int]
    USER_PROMPT_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[TaskDescription]
    actions: _containers.RepeatedCompositeFieldContainer[ActionDescription]
    use_tool: ActionDescription
    tools: _containers.RepeatedCompositeFieldContainer[ToolDescription]
    knowledge_base: _containers.RepeatedCompositeFieldContainer[ArticleDescription]
    issue_types: _containers.RepeatedCompositeFieldContainer[IssueTypeDescription]
    categories: _containers.RepeatedScalarFieldContainer[str]
    priorities: _containers.RepeatedScalarFieldContainer[str]
    departments: _containers.RepeatedScalarFieldContainer[str]
    requestable_fields: _containers.RepeatedScalarFieldContainer[str]
    policy_variants: _containers.RepeatedCompositeFieldContainer[PolicyVariantDescription]
    rewards: _containers.RepeatedCompositeFieldContainer[RewardRule]
    prompt: PromptTexts
    system_prompt: str
    user_prompt: str
    def __init__(self, tasks: _Optional[_Iterable[_Union[TaskDescription, _Mapping]]] = ..., actions: _Optional[_Iterable[_Union[ActionDescription, _Mapping]]] = ..., use_tool: _Optional[_Union[ActionDescription, _Mapping]] = ..., tools: _Optional[_Iterable[_Union[ToolDescription, _Mapping]]] = ..., knowledge_base: _Optional[_Iterable[_Union[ArticleDescription, _Mapping]]] = ..., issue_types: _Optional[_Iterable[_Union[IssueTypeDescription, _Mapping]]] = ..., categories: _Optional[_Iterable[str]] = ..., priorities: _Optional[_Iterable[str]] = ..., departments: _Optional[_Iterable[str]] = ..., requestable_fields: _Optional[_Iterable[str]] = ..., policy_variants: _Optional[_Iterable[_Union[PolicyVariantDescription, _Mapping]]] = ..., rewards: _Optional[_Iterable[_Union[RewardRule, _Mapping]]] = ..., prompt: _Optional[_Union[PromptTexts, _Mapping]] = ..., system_prompt: _Optional[str] = ..., user_prompt: _Optional[str] = ...) -> None: ...

class TaskDescription(_message.Message):
    __slots__ = ("task", "components", "gates", "grading", "rules")
    TASK_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    GATES_FIELD_NUMBER: _ClassVar[int]
    GRADING_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    task: _types_pb2.TaskInfo
    components: _containers.RepeatedCompositeFieldContainer[WeightedComponent]
    gates: _containers.RepeatedCompositeFieldContainer[GateRule]
    grading: str
    rules: str
    def __init__(self, task: _Optional[_Union[_types_pb2.TaskInfo, _Mapping]] = ..., components: _Optional[_Iterable[_Union[WeightedComponent, _Mapping]]] = ..., gates: _Optional[_Iterable[_Union[GateRule, _Mapping]]] = ..., grading: _Optional[str] = ..., rules: _Optional[str] = ...) -> None: ...

class WeightedComponent(_message.Message):
    __slots__ = ("name", "weight")
    NAME_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    name: str
    weight: float
    def __init__(self, name: _Optional[str] = ..., weight: _Optional[float] = ...) -> None: ...

class GateRule(_message.Message):
    __slots__ = ("name", "rule")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    name: str
    rule: str
    def __init__(self, name: _Optional[str] = ..., rule: _Optional[str] = ...) -> None: ...

class ActionDescription(_message.Message):
    __slots__ = ("kind", "description", "parameters_json_schema", "required", "cost", "example")
    KIND_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    EXAMPLE_FIELD_NUMBER: _ClassVar[int]
    kind: str
    description: str
    parameters_json_schema: str
    required: _containers.RepeatedScalarFieldContainer[str]
    cost: float
    example: str
    def __init__(self, kind: _Optional[str] = ..., description: _Optional[str] = ..., parameters_json_schema: _Optional[str] = ..., required: _Optional[_Iterable[str]] = ..., cost: _Optional[float] = ..., example: _Optional[str] = ...) -> None: ...

class ToolDescription(_message.Message):
    __slots__ = ("name", "description", "arguments", "cost", "changes_records", "needs_verification", "parameters_json_schema", "example")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    CHANGES_RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEEDS_VERIFICATION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    EXAMPLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    arguments: _containers.RepeatedScalarFieldContainer[str]
    cost: float
    changes_records: bool
    needs_verification: bool
    parameters_json_schema: str
    example: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., arguments: _Optional[_Iterable[str]] = ..., cost: _Optional[float] = ..., changes_records: _Optional[bool] = ..., needs_verification: _Optional[bool] = ..., parameters_json_schema: _Optional[str] = ..., example: _Optional[str] = ...) -> None: ...

class ArticleDescription(_message.Message):
    __slots__ = ("article_id", "title", "steps", "needs")
    ARTICLE_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    NEEDS_FIELD_NUMBER: _ClassVar[int]
    article_id: str
    title: str
    steps: _containers.RepeatedScalarFieldContainer[str]
    needs: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, article_id: _Optional[str] = ..., title: _Optional[str] = ..., steps: _Optional[_Iterable[str]] = ..., needs: _Optional[_Iterable[str]] = ...) -> None: ...

class IssueTypeDescription(_message.Message):
    __slots__ = ("issue_id", "category", "title")
    ISSUE_ID_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    issue_id: str
    category: str
    title: str
    def __init__(self, issue_id: _Optional[str] = ..., category: _Optional[str] = ..., title: _Optional[str] = ...) -> None: ...

class PolicyVariantDescription(_message.Message):
    __slots__ = ("name", "refund_caps", "rules", "desk_rules", "splits")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REFUND_CAPS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    DESK_RULES_FIELD_NUMBER: _ClassVar[int]
    SPLITS_FIELD_NUMBER: _ClassVar[int]
    name: str
    refund_caps: _containers.RepeatedCompositeFieldContainer[RefundCap]
    rules: _containers.RepeatedScalarFieldContainer[str]
    desk_rules: _containers.RepeatedScalarFieldContainer[str]
    splits: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., refund_caps: _Optional[_Iterable[_Union[RefundCap, _Mapping]]] = ..., rules: _Optional[_Iterable[str]] = ..., desk_rules: _Optional[_Iterable[str]] = ..., splits: _Optional[_Iterable[str]] = ...) -> None: ...

class RefundCap(_message.Message):
    __slots__ = ("tier", "dollars")
    TIER_FIELD_NUMBER: _ClassVar[int]
    DOLLARS_FIELD_NUMBER: _ClassVar[int]
    tier: str
    dollars: float
    def __init__(self, tier: _Optional[str] = ..., dollars: _Optional[float] = ...) -> None: ...

class RewardRule(_message.Message):
    __slots__ = ("name", "value", "applies")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    APPLIES_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: float
    applies: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[float] = ..., applies: _Optional[str] = ...) -> None: ...

class PromptTexts(_message.Message):
    __slots__ = ("intro", "tools_header", "knowledge_base_header", "output_format", "example_reply", "tool_example_reply", "tool_call_output_format", "json_reply_line", "tool_call_reply_line")
    INTRO_FIELD_NUMBER: _ClassVar[int]
    TOOLS_HEADER_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_BASE_HEADER_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    EXAMPLE_REPLY_FIELD_NUMBER: _ClassVar[int]
    TOOL_EXAMPLE_REPLY_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_OUTPUT_FORMAT_FIELD_NUMBER: _ClassVar[int]
    JSON_REPLY_LINE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_REPLY_LINE_FIELD_NUMBER: _ClassVar[int]
    intro: str
    tools_header: str
    knowledge_base_header: str
    output_format: str
    example_reply: str
    tool_example_reply: str
    tool_call_output_format: str
    json_reply_line: str
    tool_call_reply_line: str
    def __init__(self, intro: _Optional[str] = ..., tools_header: _Optional[str] = ..., knowledge_base_header: _Optional[str] = ..., output_format: _Optional[str] = ..., example_reply: _Optional[str] = ..., tool_example_reply: _Optional[str] = ..., tool_call_output_format: _Optional[str] = ..., json_reply_line: _Optional[str] = ..., tool_call_reply_line: _Optional[str] = ...) -> None: ...
