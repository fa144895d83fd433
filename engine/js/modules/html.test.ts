import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Element, parseHTML, Selection } from './html.ts';
import { HttpResponse, interruptedResponse } from './http-response.ts';

const SHOP = readFileSync(new URL('../../../test/fixtures/html/shop.html', import.meta.url), 'utf8');
const doc = parseHTML(SHOP);

test('find, text, size and attr read the page as k6 does; a missing attribute is undefined', () => {
  assert.equal(doc.find('title').text(), 'Shop & more');
  assert.equal(doc.find('li.item').size(), 3);
  assert.equal(doc.find('li.sale a').attr('href'), '/p/8');
  assert.equal(doc.find('li a').attr('href'), '/p/7', 'attr reads the first match');
  assert.equal(doc.find('h1').attr('title'), undefined);
  assert.equal(doc.find('h1').attr('title', 'none'), 'none', 'the fallback for a missing attribute');
  assert.equal(doc.find('nothing').attr('href'), undefined, 'an empty selection has no attributes');
  assert.equal(doc.find('nothing').text(), '');
  assert.equal(doc.find('nothing').html(), '');
  assert.equal(doc.find('li.sale').html(), '<a href="/p/8">Chair</a> <b>-20%</b>');
});

test('first, last, eq, slice, children, parent, filter, is and not make new selections', () => {
  const items = doc.find('#products li');
  assert.equal(items.first().text(), 'Lamp');
  assert.equal(items.last().text(), 'Desk');
  assert.equal(items.eq(1).find('a').text(), 'Chair');
  assert.equal(items.eq(-1).text(), 'Desk', 'a negative index counts from the end');
  assert.equal(items.eq(5).size(), 0);
  assert.equal(items.slice(1).size(), 2);
  assert.equal(doc.find('#products').children().size(), 3);
  assert.equal(doc.find('#products').children('.sale').size(), 1);
  assert.equal(doc.find('b').parent().attr('data-id'), '8');
  assert.equal(items.filter('.sale').size(), 1);
  assert.equal(items.filter((_i, s) => s.find('a').attr('rel') === 'nofollow').text(), 'Desk');
  assert.equal(items.not('.sale').size(), 2);
  assert.equal(items.is('.sale'), true);
  assert.equal(
    items.is((i) => i > 5),
    false,
  );
  assert.equal(doc.find('li.sale').next().text(), 'Desk');
  assert.equal(doc.find('li.sale').prev().text(), 'Lamp');
  assert.equal(doc.find('li.sale').siblings().size(), 2);
  assert.equal(doc.find('a').closest('ul').attr('id'), 'products');
  assert.equal(items.has('b').size(), 1);
  assert.equal(items.index(doc.find('li.sale')), 1);
  assert.equal(doc.find('li.sale').index(), 1, 'its position among its siblings');
  assert.ok(items.first() instanceof Selection);
  assert.equal(items.size(), 3, 'traversals leave the selection they started from as it was');
});

test('each gives (index, Element) and returns the selection; map gives (index, Selection) and an array', () => {
  const seen: string[] = [];
  const items = doc.find('li');
  const returned = items.each((index, element) => {
    assert.ok(element instanceof Element);
    seen.push(`${index}:${element.textContent().trim()}`);
  });
  assert.equal(returned, items);
  assert.deepEqual(seen, ['0:Lamp', '1:Chair -20%', '2:Desk']);
  assert.deepEqual(
    doc.find('li a').map((_i, s) => s.attr('href')),
    ['/p/7', '/p/8', '/p/9'],
  );
  // As in k6 v0.49, a callback that throws leaves its match out of map's array...
  assert.deepEqual(
    items.map((i) => {
      if (i === 1) throw new Error('skip');
      return i;
    }),
    [0, 2],
  );
  // ...but ends each(), saying so.
  assert.throws(
    () =>
      items.each(() => {
        throw new TypeError('boom');
      }),
    /the function passed to each\(\) failed: TypeError: boom/,
  );
  assert.throws(() => items.each('x' as never), /must be a function/);
});

test('get(i) is an Element (undefined past either end), get() every Element, toArray() Selections', () => {
  const links = doc.find('a');
  const second = links.get(1) as Element;
  assert.ok(second instanceof Element);
  assert.equal(second.getAttribute('href'), '/p/8');
  assert.equal((links.get(-1) as Element).textContent(), 'Desk');
  assert.equal(links.get(3), undefined);
  assert.equal(links.get(-3), undefined, 'k6 takes -len < i < len');
  assert.equal((links.get() as Element[]).length, 3);
  assert.deepEqual(
    links.toArray().map((s) => s.text()),
    ['Lamp', 'Chair', 'Desk'],
  );
});

test("an Element's DOM-like methods", () => {
  const h1 = doc.find('h1').get(0) as Element;
  assert.equal(h1.nodeName(), 'h1');
  assert.equal(h1.nodeType(), 1);
  assert.equal(h1.id(), 'top');
  assert.deepEqual(h1.classList(), ['title', 'main']);
  assert.equal(h1.className(), 'title main');
  assert.equal(h1.hasAttribute('id'), true);
  assert.equal(h1.getAttribute('nope'), undefined);
  assert.equal(h1.innerHTML(), 'Products');
  assert.equal(h1.selection().text(), 'Products');
  assert.equal(h1.nextElementSibling()?.id(), 'products');
  assert.equal(h1.parentElement()?.nodeName(), 'body');
  assert.equal(h1.ownerDocument()?.nodeType(), 9);
  assert.equal(h1.toString(), '[object html.Node]');
  const list = doc.find('#products').get(0) as Element;
  assert.equal(list.childElementCount(), 3);
  assert.equal(list.children().length, 3);
  assert.equal(list.firstChild()?.nodeName(), '#text', 'the whitespace before the first li');
  assert.equal(list.firstElementChild()?.querySelector('a')?.textContent(), 'Lamp');
  assert.equal(list.querySelectorAll('a').length, 3);
  assert.equal(list.getElementsByClassName('sale').length, 1);
  assert.equal(list.contains(list.querySelector('b')), true);
  assert.equal(list.contains(list), false, 'an element does not contain itself (the DOM, not jQuery)');
  assert.equal(list.querySelector('li')?.matches('.item'), true);
  assert.equal(list.querySelector('table'), undefined);
});

test('val reads form controls as k6 does; data reads data-* attributes as values', () => {
  assert.equal(doc.find('input[name=qty]').val(), '2');
  assert.equal(doc.find('input[name=gift]').val(), 'on', 'a checkbox without a value');
  assert.equal(doc.find('textarea').val(), 'Leave it at the door');
  assert.equal(
    doc.find('select[name=color]').val(),
    'Blue',
    "the selected option's text when it has no value",
  );
  assert.deepEqual(doc.find('select[name=sizes]').val(), ['s', 'l']);
  assert.equal(doc.find('button').val(), '');
  assert.equal(doc.find('h1').val(), undefined);
  const lamp = doc.find('li').first();
  assert.equal(lamp.data('id'), 7);
  assert.equal(lamp.data('price'), '12.50', 'a number whose text does not survive the round trip stays text');
  assert.deepEqual(lamp.data('tags'), ['a', 'b']);
  assert.deepEqual(lamp.data(), { id: 7, price: '12.50', tags: ['a', 'b'] });
  assert.equal(doc.find('h1').data('x'), undefined);
});

test('a selector that is neither a string, a Selection nor an Element is refused', () => {
  assert.throws(() => doc.find(5 as never), /cannot use a 'number' as a selector/);
  assert.throws(() => doc.filter(5 as never), /must be a function, a selector or a selection/);
});

test('res.html() parses the body, res.html(selector) finds in it, a failed request throws', () => {
  const res = new HttpResponse({ ...interruptedResponse('GET', 'http://shop/'), body: SHOP });
  assert.equal(res.html().find('h1').text(), 'Products');
  assert.equal(res.html('li').size(), 3);
  assert.equal(res.html().url, 'http://shop/');
  const bytes = new TextEncoder().encode('<p>bytes</p>').buffer;
  assert.equal(new HttpResponse({ ...res, body: bytes }).html('p').text(), 'bytes');
  assert.throws(() => interruptedResponse('GET', 'http://shop/').html(), /the body is null/);
});
