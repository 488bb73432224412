"""OpenAI-compatible endpoints (OpenAI, Azure OpenAI v1, vLLM, Ollama, llama.cpp's server,
Mistral, Groq, Together, OpenRouter…): what the provider knows about itself. The client that
speaks the protocol through the official `openai` SDK is `client`, loaded when a configuration
first calls one."""

from ..base import OutputMode, ProviderFacts

FACTS = ProviderFacts(
    name="openai_compatible",
    label="OpenAI-compatible endpoint",
    # An endpoint of this protocol serves any maker's models: the model id tells. Routers
    # name models "vendor/model" ("meta-llama/llama-3-70b", "openai/gpt-4o").
    model_families=(
        (r"gpt-|o\d|chatgpt|text-davinci", "OpenAI"),
        (r"claude", "Anthropic"),
        (r"gemini|gemma|palm", "Google"),
        (r"llama|meta-llama", "Meta"),
        (r"mistral|mixtral|ministral|codestral", "Mistral"),
        (r"qwen|qwq", "Alibaba"),
        (r"deepseek", "DeepSeek"),
        (r"grok", "xAI"),
        (r"synthetic-", "synthetic"),
    ),
    key_hosts={
        "OPENAI_API_KEY": ("api.openai.com",),
        "AZURE_OPENAI_API_KEY": ("*.openai.azure.com", "*.cognitiveservices.azure.com"),
        "MISTRAL_API_KEY": ("api.mistral.ai",),
        "GROQ_API_KEY": ("api.groq.com",),
        "TOGETHER_API_KEY": ("api.together.xyz", "api.together.ai"),
        "OPENROUTER_API_KEY": ("openrouter.ai",),
        "DEEPSEEK_API_KEY": ("api.deepseek.com",),
        "FIREWORKS_API_KEY": ("api.fireworks.ai",),
        "XAI_API_KEY": ("api.x.ai",),
        "HF_TOKEN": (
            "router.huggingface.co",
            "api-inference.huggingface.co",
            "*.huggingface.cloud",
        ),
    },
    structured_modes=(
        OutputMode.JSON_SCHEMA,
        OutputMode.JSON_OBJECT_SCHEMA,
        OutputMode.JSON_OBJECT,
        OutputMode.PROMPT,
    ),
    # Servers of this protocol name the field they refuse (FastAPI's validation errors,
    # llama.cpp's and vLLM's messages), some in the words of the APIs they imitate.
    format_refusal_words=(
        "response_format",
        "json_schema",
        "response_schema",
        "output_config",
        "output_format",
        "tool_choice",
    ),
    # finish_reason "content_filter" with no content: the provider withheld the reply.
    refusal_reasons=("content_filter",),
    rate_limit_words=("rate_limit_exceeded",),
    # The Batch API (`/v1/batches`): OpenAI's own endpoint and servers that imitate it.
    has_batches=True,
    keeps_completions=True,
)
