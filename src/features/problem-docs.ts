import { PAGE_POLICY, wantsHtml } from '../core/http/pages.js';
import { PROBLEMS, Problem, isProblemCode, problemDocument, type ProblemCode, type ProblemEntry } from '../core/http/problems.js';
import { jsonReply } from '../core/http/respond.js';
import type { RouteDefinition } from '../core/http/router.js';
import type { HttpReply, RequestContext } from '../core/http/types.js';

/**
 * `GET /problems/<code>` (docs/api.md, "Envelope, routes and limits"): the documentation every
 * problem's `type` URI leads to, as RFC 9457 §3.1.1 asks of a type URI that can be dereferenced.
 * Built from the one catalogue (src/core/http/problems.ts): its title, status, when it happens and
 * what to do. A browser, whose `Accept` names `text/html`, gets a short page; any other client
 * (curl sends `*∕*`) plain text, decided as `GET /` decides.
 *
 * The pages are the same for every caller and change only with a release, so they are public
 * and cached for an hour, and they are not rate limited: the API contract limits only its four
 * operations, and these are static like `/app.css`. `Vary: Accept` tells a cache that the two
 * forms differ.
 */
const CACHE_CONTROL = 'public, max-age=3600';

/** The page's own headers (src/features/page.ts): its Content-Security-Policy covers this HTML too. */
const SECURITY_HEADERS = {
  Vary: 'Accept',
  'Content-Security-Policy': PAGE_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
} as const;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/**
 * Links are relative (`../app.css`), so a deployment whose public URL has a path prefix
 * (`https://example.net/api`) still finds its stylesheet beside the page.
 */
function htmlPage(title: string, heading: string, lede: string, main: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="../app.css">
</head>
<body>
<header>
<h1>${escapeHtml(heading)}</h1>
<p class="lede">${lede}</p>
</header>
<main>
${main}
</main>
<footer>
<p>Every error of this API is an RFC 9457 problem document whose <code>type</code> leads to a page like this one. <a href="../v1/openapi.json">The API description</a> lists every code. <a href="../">netdiag</a></p>
</footer>
</body>
</html>
`;
}

function documentationHtml(code: ProblemCode, entry: ProblemEntry): string {
  return htmlPage(
    `${entry.title} (${String(entry.status)}): netdiag problem ${code}`,
    entry.title,
    `HTTP status ${String(entry.status)}, problem code <code>${code}</code>.`,
    `<section>
<h2>When it happens</h2>
<p>${escapeHtml(entry.when)}</p>
</section>
<section>
<h2>What to do</h2>
<p>${escapeHtml(entry.action)}</p>
</section>`,
  );
}

function documentationText(code: ProblemCode, entry: ProblemEntry): string {
  return `${entry.title} (${String(entry.status)}, ${code})\n\nWhen it happens: ${entry.when}\n\nWhat to do: ${entry.action}\n`;
}

/** The detail of an unknown code: it names the code only when it has a code's shape, so no client text of any other form is echoed. */
function unknownDetail(segment: string): string {
  return /^[a-z][a-z0-9_]{0,63}$/.test(segment)
    ? `No problem code "${segment}" exists; /v1/openapi.json lists every code.`
    : 'This is not a problem code: codes are lower-case letters, digits and underscores; /v1/openapi.json lists every code.';
}

/**
 * An unknown code is 404 `not_found`, in the form the client asked for: for a browser the problem
 * document's fields as a page, for any other client the problem document itself (the API contract).
 * Never cached, as no error is (docs/api.md).
 */
function unknownCode(ctx: RequestContext, segment: string): HttpReply {
  const detail = unknownDetail(segment);
  if (!wantsHtml(ctx)) throw new Problem('not_found', detail, { Vary: 'Accept' });
  const doc = problemDocument('not_found', detail, ctx.publicUrl ?? ctx.req.origin(), ctx.requestId);
  const fields = (Object.keys(doc) as (keyof typeof doc)[])
    .map((name) => {
      const value = escapeHtml(String(doc[name]));
      // The `type` of not_found is itself documented one segment over (a relative link, as above).
      const shown = name === 'type' ? `<a href="${doc.code}">${value}</a>` : value;
      return `<div><dt>${name}</dt><dd>${shown}</dd></div>`;
    })
    .join('\n');
  const html = htmlPage(`${doc.title} (${String(doc.status)}): netdiag`, doc.title, escapeHtml(detail), `<section>\n<dl class="facts">\n${fields}\n</dl>\n</section>`);
  return jsonReply(ctx, doc.status, html, 'text/html; charset=utf-8', 'no-store', SECURITY_HEADERS);
}

export function problemDocsRoute(): RouteDefinition {
  // Every answer is the same bytes for every request: rendered once, at start.
  const pages = new Map<string, { html: string; text: string }>();
  for (const code of Object.keys(PROBLEMS) as ProblemCode[]) {
    pages.set(code, { html: documentationHtml(code, PROBLEMS[code]), text: documentationText(code, PROBLEMS[code]) });
  }
  return {
    path: '/problems/:code',
    // Not limited: the API contract limits only its operations, and these pages are static like /app.css.
    GET: {
      limit: null,
      handle: (ctx) => {
      const segment = ctx.params.code ?? '';
      const page = isProblemCode(segment) ? pages.get(segment) : undefined;
      if (page === undefined) return unknownCode(ctx, segment);
      return wantsHtml(ctx)
        ? jsonReply(ctx, 200, page.html, 'text/html; charset=utf-8', CACHE_CONTROL, SECURITY_HEADERS)
        : jsonReply(ctx, 200, page.text, 'text/plain; charset=utf-8', CACHE_CONTROL, SECURITY_HEADERS);
      },
    },
  };
}
