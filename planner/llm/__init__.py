"""LLM implementations of the planner roles (docs/ARCHITECTURE.md, "Planner (HoloMind)").

Every role asks a model through litellm for one JSON object per call, validated against a
per-role JSON schema built from the agent's own vocabulary and memory; invalid answers get a
bounded repair prompt, and after the bound the role falls back to the deterministic
implementation it was given. ``make_llm_roles`` builds all five for ``--planner llm:<model>``.

Importing this package does not import litellm (the client imports it lazily, after setting
LITELLM_LOCAL_MODEL_COST_MAP so that nothing reaches the network unless a remote model is used).
"""

from planner.llm.client import LLMCacheMissError, LLMClient, LLMConfig, LLMConfigError, LLMRoleError
from planner.llm.factory import ROLE_NAMES, load_llm_config, make_llm_roles, model_spec_from_planner
from planner.llm.roles import LLMCritic, LLMDecomposer, LLMGrounder, LLMRefiner, LLMTranslator

__all__ = [
    "LLMCacheMissError",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "LLMCritic",
    "LLMDecomposer",
    "LLMGrounder",
    "LLMRefiner",
    "LLMRoleError",
    "LLMTranslator",
    "ROLE_NAMES",
    "load_llm_config",
    "make_llm_roles",
    "model_spec_from_planner",
]
