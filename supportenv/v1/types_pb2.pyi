from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class IssueCategory(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ISSUE_CATEGORY_UNSPECIFIED: _ClassVar[IssueCategory]
    ISSUE_CATEGORY_BILLING: _ClassVar[IssueCategory]
    ISSUE_CATEGORY_DELIVERY: _ClassVar[IssueCategory]
    ISSUE_CATEGORY_REFUND: _ClassVar[IssueCategory]
    ISSUE_CATEGORY_ACCOUNT: _ClassVar[IssueCategory]
    ISSUE_CATEGORY_TECHNICAL: _ClassVar[IssueCategory]
    ISSUE_CATEGORY_GENERAL: _ClassVar[IssueCategory]

class Priority(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PRIORITY_UNSPECIFIED: _ClassVar[Priority]
    PRIORITY_LOW: _ClassVar[Priority]
    PRIORITY_MEDIUM: _ClassVar[Priority]
    PRIORITY_HIGH: _ClassVar[Priority]
    PRIORITY_URGENT: _ClassVar[Priority]

class CustomerTier(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CUSTOMER_TIER_UNSPECIFIED: _ClassVar[CustomerTier]
    CUSTOMER_TIER_REGULAR: _ClassVar[CustomerTier]
    CUSTOMER_TIER_PREMIUM: _ClassVar[CustomerTier]
    CUSTOMER_TIER_ENTERPRISE: _ClassVar[CustomerTier]

class SentimentLabel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SENTIMENT_LABEL_UNSPECIFIED: _ClassVar[SentimentLabel]
    SENTIMENT_LABEL_ANGRY: _ClassVar[SentimentLabel]
    SENTIMENT_LABEL_FRUSTRATED: _ClassVar[SentimentLabel]
    SENTIMENT_LABEL_NEUTRAL: _ClassVar[SentimentLabel]
    SENTIMENT_LABEL_SATISFIED: _ClassVar[SentimentLabel]

class Department(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEPARTMENT_UNSPECIFIED: _ClassVar[Department]
    DEPARTMENT_BILLING: _ClassVar[Department]
    DEPARTMENT_LOGISTICS: _ClassVar[Department]
    DEPARTMENT_TECHNICAL: _ClassVar[Department]
    DEPARTMENT_ACCOUNTS: _ClassVar[Department]
    DEPARTMENT_SECURITY: _ClassVar[Department]
    DEPARTMENT_ENTERPRISE_SUCCESS: _ClassVar[Department]

class Split(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SPLIT_UNSPECIFIED: _ClassVar[Split]
    SPLIT_TRAIN: _ClassVar[Split]
    SPLIT_VALIDATION: _ClassVar[Split]
    SPLIT_TEST: _ClassVar[Split]

class Difficulty(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIFFICULTY_UNSPECIFIED: _ClassVar[Difficulty]
    DIFFICULTY_EASY: _ClassVar[Difficulty]
    DIFFICULTY_MEDIUM: _ClassVar[Difficulty]
    DIFFICULTY_HARD: _ClassVar[Difficulty]
    DIFFICULTY_EXPERT: _ClassVar[Difficulty]

class Speaker(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SPEAKER_UNSPECIFIED: _ClassVar[Speaker]
    SPEAKER_CUSTOMER: _ClassVar[Speaker]
    SPEAKER_AGENT: _ClassVar[Speaker]
    SPEAKER_SYSTEM: _ClassVar[Speaker]
ISSUE_CATEGORY_UNSPECIFIED: IssueCategory
ISSUE_CATEGORY_BILLING: IssueCategory
ISSUE_CATEGORY_DELIVERY: IssueCategory
ISSUE_CATEGORY_REFUND: IssueCategory
ISSUE_CATEGORY_ACCOUNT: IssueCategory
ISSUE_CATEGORY_TECHNICAL: IssueCategory
ISSUE_CATEGORY_GENERAL: IssueCategory
PRIORITY_UNSPECIFIED: Priority
PRIORITY_LOW: Priority
PRIORITY_MEDIUM: Priority
PRIORITY_HIGH: Priority
PRIORITY_URGENT: Priority
CUSTOMER_TIER_UNSPECIFIED: CustomerTier
CUSTOMER_TIER_REGULAR: CustomerTier
CUSTOMER_TIER_PREMIUM: CustomerTier
CUSTOMER_TIER_ENTERPRISE: CustomerTier
SENTIMENT_LABEL_UNSPECIFIED: SentimentLabel
SENTIMENT_LABEL_ANGRY: SentimentLabel
SENTIMENT_LABEL_FRUSTRATED: SentimentLabel
SENTIMENT_LABEL_NEUTRAL: SentimentLabel
SENTIMENT_LABEL_SATISFIED: SentimentLabel
DEPARTMENT_UNSPECIFIED: Department
DEPARTMENT_BILLING: Department
DEPARTMENT_LOGISTICS: Department
DEPARTMENT_TECHNICAL: Department
DEPARTMENT_ACCOUNTS: Department
DEPARTMENT_SECURITY: Department
DEPARTMENT_ENTERPRISE_SUCCESS: Department
SPLIT_UNSPECIFIED: Split
SPLIT_TRAIN: Split
SPLIT_VALIDATION: Split
SPLIT_TEST: Split
DIFFICULTY_UNSPECIFIED: Difficulty
DIFFICULTY_EASY: Difficulty
DIFFICULTY_MEDIUM: Difficulty
DIFFICULTY_HARD: Difficulty
DIFFICULTY_EXPERT: Difficulty
SPEAKER_UNSPECIFIED: Speaker
SPEAKER_CUSTOMER: Speaker
SPEAKER_AGENT: Speaker
SPEAKER_SYSTEM: Speaker

class ClassifyIssue(_message.Message):
    __slots__ = ("category", "priority", "issue_type")
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    ISSUE_TYPE_FIELD_NUMBER: _ClassVar[int]
    category: IssueCategory
    priority: Priority
    issue_type: str
    def __init__(self, category: _Optional[_Union[IssueCategory, str]] = ..., priority: _Optional[_Union[Priority, str]] = ..., issue_type: _Optional[str] = ...) -> None: ...

class AskForMoreInfo(_message.Message):
    __slots__ = ("fields", "question")
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    fields: _containers.RepeatedScalarFieldContainer[str]
    question: str
    def __init__(self, fields: _Optional[_Iterable[str]] = ..., question: _Optional[str] = ...) -> None: ...

class RespondWithSolution(_message.Message):
    __slots__ = ("message", "article_id")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ARTICLE_ID_FIELD_NUMBER: _ClassVar[int]
    message: str
    article_id: str
    def __init__(self, message: _Optional[str] = ..., article_id: _Optional[str] = ...) -> None: ...

class SuggestKnowledgeBase(_message.Message):
    __slots__ = ("article_id",)
    ARTICLE_ID_FIELD_NUMBER: _ClassVar[int]
    article_id: str
    def __init__(self, article_id: _Optional[str] = ...) -> None: ...

class AssignDepartment(_message.Message):
    __slots__ = ("department", "note")
    DEPARTMENT_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    department: Department
    note: str
    def __init__(self, department: _Optional[_Union[Department, str]] = ..., note: _Optional[str] = ...) -> None: ...

class EscalateToHuman(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class RequestCallback(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class MarkResolved(_message.Message):
    __slots__ = ("summary",)
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    summary: str
    def __init__(self, summary: _Optional[str] = ...) -> None: ...

class ToolArgument(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class UseTool(_message.Message):
    __slots__ = ("tool", "arguments")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    tool: str
    arguments: _containers.RepeatedCompositeFieldContainer[ToolArgument]
    def __init__(self, tool: _Optional[str] = ..., arguments: _Optional[_Iterable[_Union[ToolArgument, _Mapping]]] = ...) -> None: ...

class InvalidAction(_message.Message):
    __slots__ = ("raw", "error")
    RAW_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    raw: str
    error: str
    def __init__(self, raw: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("classify_issue", "ask_for_more_info", "respond_with_solution", "suggest_knowledge_base", "assign_department", "escalate_to_human", "request_callback", "mark_resolved", "invalid_action", "use_tool")
    CLASSIFY_ISSUE_FIELD_NUMBER: _ClassVar[int]
    ASK_FOR_MORE_INFO_FIELD_NUMBER: _ClassVar[int]
    RESPOND_WITH_SOLUTION_FIELD_NUMBER: _ClassVar[int]
    SUGGEST_KNOWLEDGE_BASE_FIELD_NUMBER: _ClassVar[int]
    ASSIGN_DEPARTMENT_FIELD_NUMBER: _ClassVar[int]
    ESCALATE_TO_HUMAN_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CALLBACK_FIELD_NUMBER: _ClassVar[int]
    MARK_RESOLVED_FIELD_NUMBER: _ClassVar[int]
    INVALID_ACTION_FIELD_NUMBER: _ClassVar[int]
    USE_TOOL_FIELD_NUMBER: _ClassVar[int]
    classify_issue: ClassifyIssue
    ask_for_more_info: AskForMoreInfo
    respond_with_solution: RespondWithSolution
    suggest_knowledge_base: SuggestKnowledgeBase
    assign_department: AssignDepartment
    escalate_to_human: EscalateToHuman
    request_callback: RequestCallback
    mark_resolved: MarkResolved
    invalid_action: InvalidAction
    use_tool: UseTool
    def __init__(self, classify_issue: _Optional[_Union[ClassifyIssue, _Mapping]] = ..., ask_for_more_info: _Optional[_Union[AskForMoreInfo, _Mapping]] = ..., respond_with_solution: _Optional[_Union[RespondWithSolution, _Mapping]] = ..., suggest_knowledge_base: _Optional[_Union[SuggestKnowledgeBase, _Mapping]] = ..., assign_department: _Optional[_Union[AssignDepartment, _Mapping]] = ..., escalate_to_human: _Optional[_Union[EscalateToHuman, _Mapping]] = ..., request_callback: _Optional[_Union[RequestCallback, _Mapping]] = ..., mark_resolved: _Optional[_Union[MarkResolved, _Mapping]] = ..., invalid_action: _Optional[_Union[InvalidAction, _Mapping]] = ..., use_tool: _Optional[_Union[UseTool, _Mapping]] = ...) -> None: ...

class ConversationTurn(_message.Message):
    __slots__ = ("speaker", "text", "step")
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    speaker: Speaker
    text: str
    step: int
    def __init__(self, speaker: _Optional[_Union[Speaker, str]] = ..., text: _Optional[str] = ..., step: _Optional[int] = ...) -> None: ...

class KnowledgeBaseMatch(_message.Message):
    __slots__ = ("article_id", "title", "score")
    ARTICLE_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    article_id: str
    title: str
    score: float
    def __init__(self, article_id: _Optional[str] = ..., title: _Optional[str] = ..., score: _Optional[float] = ...) -> None: ...

class Fact(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ("tool", "status", "message", "data_json")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    tool: str
    status: str
    message: str
    data_json: str
    def __init__(self, tool: _Optional[str] = ..., status: _Optional[str] = ..., message: _Optional[str] = ..., data_json: _Optional[str] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("ticket_id", "task_id", "customer_message", "history", "sentiment_label", "sentiment_score", "customer_tier", "customer_tenure_days", "customer_total_revenue", "category", "priority", "kb_matches", "revealed_facts", "requestable_fields", "policy", "task_instructions", "step", "max_steps", "steps_left", "cost_so_far", "escalated", "assigned_department", "callback_scheduled", "last_action_feedback", "issue_types", "issue_type", "last_reward", "last_reward_breakdown", "tool_result", "allowed_actions")
    TICKET_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    CUSTOMER_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    SENTIMENT_LABEL_FIELD_NUMBER: _ClassVar[int]
    SENTIMENT_SCORE_FIELD_NUMBER: _ClassVar[int]
    CUSTOMER_TIER_FIELD_NUMBER: _ClassVar[int]
    CUSTOMER_TENURE_DAYS_FIELD_NUMBER: _ClassVar[int]
    CUSTOMER_TOTAL_REVENUE_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    KB_MATCHES_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FACTS_FIELD_NUMBER: _ClassVar[int]
    REQUESTABLE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    TASK_INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    STEPS_LEFT_FIELD_NUMBER: _ClassVar[int]
    COST_SO_FAR_FIELD_NUMBER: _ClassVar[int]
    ESCALATED_FIELD_NUMBER: _ClassVar[int]
    ASSIGNED_DEPARTMENT_FIELD_NUMBER: _ClassVar[int]
    CALLBACK_SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    LAST_ACTION_FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    ISSUE_TYPES_FIELD_NUMBER: _ClassVar[int]
    ISSUE_TYPE_FIELD_NUMBER: _ClassVar[int]
    LAST_REWARD_FIELD_NUMBER: _ClassVar[int]
    LAST_REWARD_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    ticket_id: str
    task_id: str
    customer_message: str
    history: _containers.RepeatedCompositeFieldContainer[ConversationTurn]
    sentiment_label: SentimentLabel
    sentiment_score: float
    customer_tier: CustomerTier
    customer_tenure_days: int
    customer_total_revenue: float
    category: IssueCategory
    priority: Priority
    kb_matches: _containers.RepeatedCompositeFieldContainer[KnowledgeBaseMatch]
    revealed_facts: _containers.RepeatedCompositeFieldContainer[Fact]
    requestable_fields: _containers.RepeatedScalarFieldContainer[str]
    policy: _containers.RepeatedScalarFieldContainer[str]
    task_instructions: str
    step: int
    max_steps: int
    steps_left: int
    cost_so_far: float
    escalated: bool
    assigned_department: Department
    callback_scheduled: bool
    last_action_feedback: str
    issue_types: _containers.RepeatedScalarFieldContainer[str]
    issue_type: str
    last_reward: float
    last_reward_breakdown: _containers.RepeatedCompositeFieldContainer[RewardComponent]
    tool_result: ToolResult
    allowed_actions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, ticket_id: _Optional[str] = ..., task_id: _Optional[str] = ..., customer_message: _Optional[str] = ..., history: _Optional[_Iterable[_Union[ConversationTurn, _Mapping]]] = ..., sentiment_label: _Optional[_Union[SentimentLabel, str]] = ..., sentiment_score: _Optional[float] = ..., customer_tier: _Optional[_Union[CustomerTier, str]] = ..., customer_tenure_days: _Optional[int] = ..., customer_total_revenue: _Optional[float] = ..., category: _Optional[_Union[IssueCategory, str]] = ..., priority: _Optional[_Union[Priority, str]] = ..., kb_matches: _Optional[_Iterable[_Union[KnowledgeBaseMatch, _Mapping]]] = ..., revealed_facts: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ..., requestable_fields: _Optional[_Iterable[str]] = ..., policy: _Optional[_Iterable[str]] = ..., task_instructions: _Optional[str] = ..., step: _Optional[int] = ..., max_steps: _Optional[int] = ..., steps_left: _Optional[int] = ..., cost_so_far: _Optional[float] = ..., escalated: _Optional[bool] = ..., assigned_department: _Optional[_Union[Department, str]] = ..., callback_scheduled: _Optional[bool] = ..., last_action_feedback: _Optional[str] = ..., issue_types: _Optional[_Iterable[str]] = ..., issue_type: _Optional[str] = ..., last_reward: _Optional[float] = ..., last_reward_breakdown: _Optional[_Iterable[_Union[RewardComponent, _Mapping]]] = ..., tool_result: _Optional[_Union[ToolResult, _Mapping]] = ..., allowed_actions: _Optional[_Iterable[str]] = ...) -> None: ...

class RewardComponent(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: float
    def __init__(self, name: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...

class TaskInfo(_message.Message):
    __slots__ = ("task_id", "name", "difficulty", "description", "max_steps", "pass_threshold", "weight", "grader_components", "instructions", "allowed_actions")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DIFFICULTY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    PASS_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    GRADER_COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    name: str
    difficulty: Difficulty
    description: str
    max_steps: int
    pass_threshold: float
    weight: float
    grader_components: _containers.RepeatedScalarFieldContainer[str]
    instructions: str
    allowed_actions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, task_id: _Optional[str] = ..., name: _Optional[str] = ..., difficulty: _Optional[_Union[Difficulty, str]] = ..., description: _Optional[str] = ..., max_steps: _Optional[int] = ..., pass_threshold: _Optional[float] = ..., weight: _Optional[float] = ..., grader_components: _Optional[_Iterable[str]] = ..., instructions: _Optional[str] = ..., allowed_actions: _Optional[_Iterable[str]] = ...) -> None: ...

class Trajectory(_message.Message):
    __slots__ = ("task_id", "split", "seed", "actions", "episode_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    split: Split
    seed: int
    actions: _containers.RepeatedCompositeFieldContainer[Action]
    episode_id: str
    def __init__(self, task_id: _Optional[str] = ..., split: _Optional[_Union[Split, str]] = ..., seed: _Optional[int] = ..., actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., episode_id: _Optional[str] = ...) -> None: ...
