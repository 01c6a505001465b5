// Evaluated in the page by test_state.py: streams Markdown in small chunks.
(async () => {
  const M = await import('./static/js/markdown.js');
  const text = '# Title\n\nFirst paragraph with **bold**.\n\n- one\n- two\n\n```\ncode <b>x</b>\n```\n\nLast words here';
  const el = document.createElement('div');
  const stream = new M.MarkdownStream(el);
  for (const ch of text.match(/.{1,3}/gs)) stream.append(ch);
  const heads = el.querySelectorAll('.code-block > .code-head').length; // copy bar on final code
  el.querySelectorAll('.code-head').forEach((e) => e.remove());
  const streamed = el.innerText;
  const blocks = el.querySelectorAll('.md-block').length;
  const full = document.createElement('div');
  full.append(M.renderMarkdown(text));
  const clean = document.createElement('div');
  clean.append(M.sanitize('<p>ok</p><img src=x onerror=alert(1)><a href="javascript:alert(1)">j</a>'));
  return {streamed, full: full.innerText, blocks, renders: stream.renders, chunks: text.match(/.{1,3}/gs).length,
          clean: clean.innerHTML, bold: el.querySelectorAll('strong').length, code: el.querySelector('pre code').textContent, heads};
})
