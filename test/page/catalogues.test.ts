// The page's message catalogues (web/i18n/): every language has every message English has and no
// other, each with the same placeholders; the HTML's own (English) words are the catalogue's; the
// mode descriptions say what the server's do; the language a reader gets; and the placeholder
// filling the page and the command line share (src/common/template.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fill, placeholders } from '../../src/common/template.js';
import { SPEED_TEST_CONFIGURATION } from '../../src/features/speedtest/configuration.js';
import { en } from '../../web/i18n/en.js';
import { chooseLanguage, LANGUAGES } from '../../web/i18n/languages.js';
import { catalogue } from '../support/catalogues.js';

const englishKeys = Object.keys(en).sort();

describe('the message catalogues', () => {
  it('are one file per language the page lists, each exporting its catalogue by its code', () => {
    const files = readdirSync(new URL('../../web/i18n/', import.meta.url)).filter((f) => /^[a-z]{2}\.ts$/.test(f)).map((f) => f.slice(0, 2)).sort();
    expect(files).toEqual(LANGUAGES.map((l) => l.code).sort());
  });

  it.each(LANGUAGES.map((l) => [l.code, catalogue(l.code)] as const))('%s has exactly the messages English has', (_code, messages) => {
    expect(Object.keys(messages).sort()).toEqual(englishKeys);
  });

  it.each(LANGUAGES.map((l) => [l.code, catalogue(l.code)] as const))('%s: each message has the placeholders the English one has, and is not empty', (_code, messages) => {
    const mismatched = Object.entries(en).filter(([key, english]) => placeholders(english).join() !== placeholders((messages as Record<string, string>)[key] ?? '').join());
    expect(mismatched.map(([key]) => key)).toEqual([]);
    expect(Object.entries(messages).filter(([, message]) => message.trim() === '').map(([key]) => key)).toEqual([]);
  });
});

describe('the Japanese catalogue', () => {
  it('spells "browser" one way throughout: ブラウザー, never ブラウザ without the long mark', () => {
    const messages = Object.entries(catalogue('ja'));
    expect(messages.filter(([, text]) => text.includes('ブラウザー')).length).toBeGreaterThan(3);
    expect(messages.filter(([, text]) => /ブラウザ(?!ー)/.test(text)).map(([key]) => key)).toEqual([]);
  });
});

describe("the page's HTML", () => {
  const html = readFileSync(new URL('../../web/index.html', import.meta.url), 'utf8');
  const normal = (text: string) => text.replace(/\s+/g, ' ').trim();

  it('names only messages that exist, and its own words are the English ones', () => {
    const named = [...html.matchAll(/<([a-z0-9]+)[^>]*\sdata-i18n(?:-initial)?="([^"]+)"[^>]*>([^<]*)<\/\1>/g)];
    expect(named.length).toBeGreaterThan(60);
    const wrong = named.filter(([, , key = '', text = '']) => normal(text) !== (en as Record<string, string>)[key]).map(([, , key, text]) => `${key ?? ''}: ${normal(text ?? '')}`);
    expect(wrong).toEqual([]);
    const labels = [...html.matchAll(/aria-label="([^"]*)"[^>]*data-i18n-label="([^"]+)"/g)];
    expect(labels.length).toBeGreaterThan(0);
    expect(labels.filter(([, text, key = '']) => text !== (en as Record<string, string>)[key]).map(([, , key]) => key)).toEqual([]);
  });

  it('marks every text between tags for translation, but for names, numbers and symbols', () => {
    // Text directly inside an element that carries no message key: only what needs none.
    const body = html.slice(html.indexOf('<body>'));
    const untranslated = [...body.matchAll(/<([a-z0-9]+)(?![^>]*data-i18n)[^>]*>([^<]*[A-Za-z]{3,}[^<]*)</g)].map(([, , text = '']) => normal(text)).filter((text) => text !== '');
    // The record types are no longer in the HTML: web/dns/dns.ts fills the selector from the one list.
    expect(untranslated).toEqual(['netdiag', 'English', '{{ADDRESS}}', 'IPv4', 'IPv6']);
  });
});

describe('the speed-test modes', () => {
  it("say in English what the server's own descriptions say", () => {
    const modes = Object.fromEntries(SPEED_TEST_CONFIGURATION.modes.map((m) => [m.id, m.description]));
    expect(en['speed.mode-light-hint']).toBe(modes.light);
    expect(en['speed.mode-full-hint']).toBe(modes.full);
  });
});

describe("the reader's language", () => {
  it("is the reader's choice, else the first of the browser's languages the page has, else English", () => {
    expect(chooseLanguage(null, ['de-AT', 'en']).code).toBe('de');
    expect(chooseLanguage(null, ['fr-FR', 'ja']).code).toBe('ja');
    expect(chooseLanguage('es', ['de-AT']).code).toBe('es');
    expect(chooseLanguage('xx', ['ar-EG']).code).toBe('ar');
    expect(chooseLanguage(null, ['fr-FR', 'pt']).code).toBe('en');
    expect(chooseLanguage(null, ['ar']).dir).toBe('rtl');
  });
});

describe('placeholders', () => {
  it('are filled by name, wherever they stand; one without a value stays as written', () => {
    expect(fill('{a} of {b}, {a}', { a: '1', b: '2' })).toBe('1 of 2, 1');
    expect(fill('the {missing} one', {})).toBe('the {missing} one');
    expect(placeholders('{b} and {a} and {b}')).toEqual(['a', 'b']);
  });
});
