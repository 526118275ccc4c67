// Content negotiation by the client's `Accept` header (RFC 9110 §12.5.1), for the few answers
// that come in more than one form: `/` (page, JSON or text), the problem documents' pages and
// the text routes' problems. The header is parsed by `negotiator` (the one Express and most Node
// servers use): quality values count, `q=0` refuses a type, and a more specific range beats a
// wildcard for the same type.
import Negotiator from 'negotiator';
import { listHead } from '../header-cap.js';
import type { RequestContext } from './types.js';

/** The forms an answer can take here, by the media type each is offered as. */
const MEDIA = { text: 'text/plain', json: 'application/json', problemJson: 'application/problem+json', html: 'text/html' } as const;
type Form = 'text' | 'json' | 'html';

const FORM_OF: Readonly<Record<string, Form>> = {
  [MEDIA.text]: 'text',
  [MEDIA.json]: 'json',
  [MEDIA.problemJson]: 'json',
  [MEDIA.html]: 'html',
};

/**
 * The form the client prefers among `forms`. Text is offered first, so it wins whenever the
 * client does not prefer another (curl's `*∕*`, no header, only wildcards, or nothing acceptable:
 * RFC 9110 §12.5.1 lets a server answer its default then rather than 406). Between forms the
 * client names with equal weight, the one it names first wins (negotiator's tie-break).
 * JSON is offered under both JSON types, so `application/problem+json` names it too.
 */
export function preferredForm(ctx: Pick<RequestContext, 'req'>, forms: readonly Exclude<Form, 'text'>[]): Form {
  const accept = ctx.req.header('accept');
  // Most requests name nothing or only `*∕*`: text, without parsing.
  if (accept === undefined || accept === '*/*') return 'text';
  const offered: string[] = [MEDIA.text];
  for (const form of forms) {
    if (form === 'json') offered.push(MEDIA.json, MEDIA.problemJson);
    else offered.push(MEDIA.html);
  }
  const chosen = new Negotiator({ headers: { accept: listHead(accept) } }).mediaType(offered);
  return chosen === undefined ? 'text' : (FORM_OF[chosen] ?? 'text');
}
