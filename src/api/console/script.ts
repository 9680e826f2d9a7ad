// The console's and portal's one script (C14, C15), served at <base>/assets/console.js under the CSP's
// `script-src 'self'` (no inline script anywhere, no eval). It only adds to pages that work without it: it shows the
// copy buttons beside ids (hidden otherwise), keeps relative times current, and, on a page whose <main> names a change stream (data-live), listens
// to it and, on `change`, re-reads the page with fetch and swaps in its live regions ([data-live-region] by id, or the
// whole <main>). The stream carries no data, only that something changed: what is shown comes from the page itself,
// through the same session and role checks as a reload.
export const SCRIPT = `'use strict';
(function () {
  function copy(button) {
    var text = button.getAttribute('data-copy');
    var done = function () {
      button.classList.add('copied');
      button.textContent = 'Copied';
      setTimeout(function () { button.classList.remove('copied'); button.textContent = 'Copy'; }, 1500);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () {});
      return;
    }
    var code = button.previousElementSibling;
    if (!code) return;
    var range = document.createRange();
    range.selectNodeContents(code);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    try { if (document.execCommand('copy')) done(); } catch (e) { /* the id stays selected for Ctrl-C */ }
  }
  function bind(root) {
    root.querySelectorAll('button.copy[data-copy]').forEach(function (button) {
      button.hidden = false;
      if (button.getAttribute('data-bound')) return;
      button.setAttribute('data-bound', '1');
      button.addEventListener('click', function () { copy(button); });
    });
  }
  bind(document);

  // Relative times (format.ts's relative(), the same words) move on while the page is open.
  var UNITS = [[86400, 'd'], [3600, 'h'], [60, 'min'], [1, 's']];
  function relative(at, now) {
    var seconds = Math.round((now - at) / 1000);
    var abs = Math.abs(seconds);
    if (abs < 5) return 'just now';
    if (abs >= 30 * 86400) return new Date(at).toISOString().slice(0, 10);
    for (var i = 0; i < UNITS.length; i += 1) {
      if (abs >= UNITS[i][0]) {
        var count = Math.floor(abs / UNITS[i][0]) + ' ' + UNITS[i][1];
        return seconds > 0 ? count + ' ago' : 'in ' + count;
      }
    }
    return 'just now';
  }
  setInterval(function () {
    var now = Date.now();
    document.querySelectorAll('time[datetime][title]').forEach(function (t) {
      var at = Date.parse(t.getAttribute('datetime'));
      if (!isNaN(at)) t.textContent = relative(at, now);
    });
  }, 15000);

  var main = document.querySelector('main[data-live]');
  if (!main || !window.EventSource || !window.fetch || !window.DOMParser) return;
  var badge = document.createElement('span');
  badge.className = 'live-status';
  badge.id = 'live-status';
  badge.textContent = 'connecting…';
  var header = document.querySelector('header');
  if (header) header.appendChild(badge);
  var busy = false;
  var again = false;
  var refreshes = 0;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (response) {
        if (!response.ok || response.redirected) throw new Error('page answered ' + response.status);
        return response.text();
      })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, 'text/html');
        var regions = main.querySelectorAll('[data-live-region]');
        if (regions.length) {
          regions.forEach(function (old) {
            var next = fresh.getElementById(old.id);
            if (next) old.replaceWith(document.importNode(next, true));
          });
        } else {
          var body = fresh.querySelector('main');
          if (body) main.replaceChildren.apply(main, Array.prototype.map.call(body.childNodes, function (n) { return document.importNode(n, true); }));
        }
        bind(main);
        refreshes += 1;
        main.setAttribute('data-refreshes', String(refreshes));
        badge.textContent = 'live · updated ' + new Date().toLocaleTimeString();
      })
      .catch(function () { badge.textContent = 'live · reload to update'; })
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  var source = new EventSource(main.getAttribute('data-live'));
  source.addEventListener('ready', function () { if (badge.textContent === 'connecting…' || badge.textContent === 'reconnecting…') badge.textContent = 'live'; });
  source.addEventListener('change', refresh);
  source.addEventListener('error', function () {
    badge.textContent = source.readyState === EventSource.CLOSED ? 'not live · reload to update' : 'reconnecting…';
  });
})();
`;
