import { describe, expect, it } from 'vitest';
import { preferredForm } from './accept.js';

const withAccept = (accept: string | undefined) => ({ req: { header: (name: string) => (name === 'accept' ? accept : undefined) } }) as Parameters<typeof preferredForm>[0];
const all = ['html', 'json'] as const;

describe('preferredForm (RFC 9110 §12.5.1)', () => {
  it('answers text to curl, to no header and to a client that names nothing it can have', () => {
    expect(preferredForm(withAccept(undefined), all)).toBe('text');
    expect(preferredForm(withAccept('*/*'), all)).toBe('text');
    expect(preferredForm(withAccept('text/*'), all)).toBe('text');
    expect(preferredForm(withAccept('image/png'), all)).toBe('text');
    expect(preferredForm(withAccept('application/json'), ['html'])).toBe('text');
    expect(preferredForm(withAccept('not a media range'), all)).toBe('text');
  });

  it("gives a browser's navigation the page", () => {
    const chromium = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
    expect(preferredForm(withAccept(chromium), all)).toBe('html');
  });

  it('honours q=0 and lower weights: a type refused or weighed down is not chosen', () => {
    expect(preferredForm(withAccept('text/html;q=0, text/plain'), all)).toBe('text');
    expect(preferredForm(withAccept('text/html;q=0.2, text/plain;q=0.5'), all)).toBe('text');
    expect(preferredForm(withAccept('application/json;q=0.5, text/plain'), all)).toBe('text');
    expect(preferredForm(withAccept('text/plain;q=0.1, application/json'), all)).toBe('json');
    expect(preferredForm(withAccept('*/*;q=0.1, text/html'), all)).toBe('html');
    expect(preferredForm(withAccept('text/plain;q=0, */*'), ['json'])).toBe('json');
  });

  it('takes either JSON type as JSON, and the first named of equal weight', () => {
    expect(preferredForm(withAccept('application/json'), all)).toBe('json');
    expect(preferredForm(withAccept('application/problem+json'), ['json'])).toBe('json');
    expect(preferredForm(withAccept('text/html, application/json'), all)).toBe('html');
    expect(preferredForm(withAccept('application/json, text/html'), all)).toBe('json');
  });
});
