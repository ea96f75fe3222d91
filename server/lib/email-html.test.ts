import { describe, expect, it } from 'vitest';
import { emailFrameDocument, sanitizeEmailHtml } from './email-html';

const hostile = `
  <p onclick="alert(1)">Hello <b>there</b></p>
  <script>alert('x')</script>
  <img src="x" onerror="alert(2)">
  <img src="https://tracker.example/pixel.gif" alt="pixel">
  <a href="javascript:alert(3)">click</a>
  <a href="https://example.com/book">Book</a>
  <iframe src="https://evil.example"></iframe>
  <form action="https://evil.example"><input name="card"></form>
  <svg><script>alert(4)</script></svg>
  <style>body{background:url(https://evil.example/bg)}</style>
  <object data="x.swf"></object><embed src="x.swf">
  <div style="color:red">styled</div>`;

describe('sanitizeEmailHtml', () => {
  const { html, blockedImages } = sanitizeEmailHtml(hostile, { allowRemoteImages: false });

  it('drops scripts, event handlers, frames, forms, embeds, svg and style blocks', () => {
    expect(html).not.toMatch(/<script|onerror|onclick|<iframe|<form|<input|<svg|<style|<object|<embed|javascript:/i);
    expect(html).toContain('<b>there</b>');
    expect(html).toContain('<div style="color:red">styled</div>');
  });

  it('withholds remote images until asked, and counts them', () => {
    expect(blockedImages).toBe(1);
    expect(html).toContain('data-blocked-src="https://tracker.example/pixel.gif"');
    expect(html).not.toContain(' src="https://tracker.example');
    const allowed = sanitizeEmailHtml(hostile, { allowRemoteImages: true });
    expect(allowed.blockedImages).toBe(0);
    expect(allowed.html).toContain('src="https://tracker.example/pixel.gif"');
  });

  it('opens links in a new tab without opener or referrer', () => {
    expect(html).toContain('<a href="https://example.com/book" target="_blank" rel="noopener noreferrer nofollow">Book</a>');
  });
});

describe('emailFrameDocument', () => {
  it('wraps the body in a CSP that forbids scripts and remote loads', () => {
    const doc = emailFrameDocument({ html: '<p>x</p>', blockedImages: 0 }, { allowRemoteImages: false });
    expect(doc).toContain("default-src 'none'; img-src data:;");
    expect(doc).not.toContain('script-src');
    expect(emailFrameDocument({ html: '', blockedImages: 0 }, { allowRemoteImages: true })).toContain(
      'img-src data: https: http:',
    );
  });
});
