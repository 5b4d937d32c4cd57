// The playground: builds the form fields of POST /images/edit, /images/remove-background or
// remove.bg's POST /v1.0/removebg, sends them with the API key (kept in this browser only), and
// shows the input and the result side by side with their dimensions, bytes and the time taken; an
// error shows its code, message and path.
import { OPERATIONS, OPERATION_NAMES, placeValue } from './operations.js';

const $ = (id) => document.getElementById(id);
const KEY_NAME = 'matte.apiKey';
const EDIT_FORMATS = ['png', 'webp', 'jpeg', 'gif', 'avif', 'auto'];
const MATTE_FORMATS = ['png', 'webp', 'jpeg', 'auto'];
const REMOVEBG_FORMATS = ['auto', 'png', 'jpg', 'zip'];
let opCounter = 0;
let resultUrl;
let inputUrl;

const formatBytes = (n) => (n < 1000 ? `${n} B` : n < 1e6 ? `${(n / 1000).toFixed(1)} kB` : `${(n / 1e6).toFixed(2)} MB`);
const radio = (name) => document.querySelector(`input[name="${name}"]:checked`).value;

// ---- the operation list as a form -----------------------------------------------------------

function addOperation(name, values) {
  const kind = OPERATIONS[name];
  const id = `op${++opCounter}`;
  const li = document.createElement('li');
  li.dataset.op = name;
  const set = document.createElement('fieldset');
  const legend = document.createElement('legend');
  legend.textContent = name;
  set.append(legend);
  const filled = values ?? {};
  for (const field of kind.fields) {
    const label = document.createElement('label');
    label.htmlFor = `${id}-${field.name}`;
    label.textContent = field.label;
    let input;
    if (field.type === 'select') {
      input = document.createElement('select');
      for (const option of field.options) input.append(new Option(option === '' ? '(default)' : option, option));
    } else {
      input = document.createElement('input');
      input.type = field.type;
      for (const attr of ['step', 'min', 'max']) if (field[attr]) input.setAttribute(attr, field[attr]);
      if (field.list) input.setAttribute('list', field.list);
    }
    input.id = `${id}-${field.name}`;
    input.dataset.field = field.name;
    input.value = filled[field.name] ?? field.value ?? (field.options ? field.options[0] : '');
    set.append(label, input);
  }
  if (!kind.fields.length) {
    const note = document.createElement('span');
    note.textContent = '(no settings)';
    set.append(note);
  }
  const tools = document.createElement('span');
  tools.className = 'tools';
  for (const [action, text] of [['up', 'Move up'], ['down', 'Move down'], ['remove', 'Remove']]) {
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.action = action;
    button.textContent = action === 'up' ? '↑' : action === 'down' ? '↓' : '✕';
    button.setAttribute('aria-label', `${text}: ${name}`);
    button.title = text;
    tools.append(button);
  }
  set.append(tools);
  li.append(set);
  $('ops').append(li);
  return li;
}

function formOperations() {
  return [...$('ops').children].map((li) => {
    const fields = {};
    for (const input of li.querySelectorAll('[data-field]')) fields[input.dataset.field] = input.value;
    return { [li.dataset.op]: OPERATIONS[li.dataset.op].toValue(fields) };
  });
}

function fillForm(list) {
  if (!Array.isArray(list)) throw new Error('the JSON must be an array of operations');
  for (const [i, entry] of list.entries()) {
    const keys = entry && typeof entry === 'object' ? Object.keys(entry) : [];
    if (keys.length !== 1 || !OPERATIONS[keys[0]]) throw new Error(`operations[${i}] is not one of ${OPERATION_NAMES.join(', ')}`);
  }
  $('ops').replaceChildren();
  for (const entry of list) {
    const [name] = Object.keys(entry);
    addOperation(name, OPERATIONS[name].fromValue(entry[name]));
  }
}

$('ops').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  const li = button.closest('li');
  const { action } = button.dataset;
  if (action === 'remove') {
    const next = li.nextElementSibling ?? li.previousElementSibling;
    li.remove();
    (next?.querySelector('button[data-action="remove"]') ?? $('add-op')).focus();
  } else if (action === 'up' && li.previousElementSibling) {
    li.previousElementSibling.before(li);
    button.focus();
  } else if (action === 'down' && li.nextElementSibling) {
    li.nextElementSibling.after(li);
    button.focus();
  }
});

for (const name of OPERATION_NAMES) $('add-op').append(new Option(name, name));
$('add').addEventListener('click', () => {
  const li = addOperation($('add-op').value);
  li.querySelector('input, select, button')?.focus();
});

// ---- modes ----------------------------------------------------------------------------------

function showOpsMode() {
  const json = radio('opsmode') === 'json';
  if (json) {
    $('ops-json').value = JSON.stringify(formOperations(), null, 1).replace(/\n\s*/g, ' ');
  } else {
    try {
      fillForm(JSON.parse($('ops-json').value || '[]'));
    } catch (err) {
      // Stay on JSON: the text is not a list the form can show.
      document.querySelector('input[name="opsmode"][value="json"]').checked = true;
      showError({ code: 'invalid_json', message: `cannot show this as a form: ${err.message}` });
      return;
    }
  }
  $('ops-form').hidden = json;
  $('ops-json-row').hidden = !json;
}

function showEndpoint() {
  const endpoint = radio('endpoint');
  const edit = endpoint === 'edit';
  const rbapi = endpoint === 'removebg';
  $('edit-ops').hidden = !edit;
  $('rb-model-row').hidden = endpoint !== 'remove-background';
  $('rbapi-box').hidden = !rbapi;
  $('output-row').hidden = rbapi; // remove.bg's API answers the image itself
  $('quality-box').hidden = !edit;
  $('anim-box').hidden = !edit;
  $('trim-box').hidden = endpoint !== 'remove-background';
  $('rb-staging').hidden = endpoint !== 'remove-background';
  const current = $('format').value;
  const formats = edit ? EDIT_FORMATS : rbapi ? REMOVEBG_FORMATS : MATTE_FORMATS;
  $('format').replaceChildren(...formats.map((f) => new Option(f, f)));
  if (formats.includes(current)) $('format').value = current;
}

function showSource() {
  const url = radio('source') === 'url';
  $('file-row').hidden = url;
  $('url-row').hidden = !url;
  showInput();
}

for (const input of document.querySelectorAll('input[name="opsmode"]')) input.addEventListener('change', showOpsMode);
for (const input of document.querySelectorAll('input[name="endpoint"]')) input.addEventListener('change', showEndpoint);
for (const input of document.querySelectorAll('input[name="source"]')) input.addEventListener('change', showSource);

// ---- the input preview ----------------------------------------------------------------------

function showInput() {
  const img = $('input-img');
  if (inputUrl) URL.revokeObjectURL(inputUrl);
  inputUrl = undefined;
  let bytes = '';
  if (radio('source') === 'file') {
    const file = $('file').files[0];
    if (!file) {
      img.hidden = true;
      $('input-info').textContent = 'no image chosen';
      return;
    }
    inputUrl = URL.createObjectURL(file);
    img.src = inputUrl;
    bytes = formatBytes(file.size);
  } else {
    if (!$('url').value) {
      img.hidden = true;
      $('input-info').textContent = 'no URL given';
      return;
    }
    img.src = $('url').value;
  }
  $('input-info').textContent = 'loading…';
  img.onload = () => {
    img.hidden = false;
    $('input-info').textContent = `${img.naturalWidth}×${img.naturalHeight}${bytes ? `, ${bytes}` : ''}`;
  };
  img.onerror = () => {
    img.hidden = true;
    $('input-info').textContent = `${bytes ? `${bytes}, ` : ''}this browser cannot preview it (the server may still read it)`;
  };
}
$('file').addEventListener('change', showInput);
$('url').addEventListener('change', showInput);

// ---- the API key: in this browser only ------------------------------------------------------

$('key').value = localStorage.getItem(KEY_NAME) ?? sessionStorage.getItem(KEY_NAME) ?? '';
$('remember').checked = localStorage.getItem(KEY_NAME) !== null;
function storeKey() {
  localStorage.removeItem(KEY_NAME);
  sessionStorage.removeItem(KEY_NAME);
  if ($('key').value) ($('remember').checked ? localStorage : sessionStorage).setItem(KEY_NAME, $('key').value);
}
$('key').addEventListener('change', storeKey);
$('remember').addEventListener('change', storeKey);

// ---- run ------------------------------------------------------------------------------------

function showError(error, status) {
  const box = $('error');
  box.replaceChildren();
  const code = document.createElement('code');
  code.textContent = error.code ?? 'error';
  box.append(status ? `${status} ` : '', code, `: ${error.message ?? ''}`);
  if (error.path) {
    const path = document.createElement('code');
    path.className = 'path';
    path.textContent = error.path;
    box.append(' (at ', path, ')');
  }
  box.hidden = false;
  // An operation's error points at its row: mark it and move the focus there.
  const match = /^operations\[(\d+)\]/.exec(error.path ?? '');
  const li = match && radio('opsmode') === 'form' ? $('ops').children[Number(match[1])] : undefined;
  if (li) {
    li.querySelector('fieldset').setAttribute('aria-invalid', 'true');
    li.querySelector('input, select')?.focus();
  }
}

function clearError() {
  $('error').hidden = true;
  for (const set of $('ops').querySelectorAll('fieldset[aria-invalid]')) set.removeAttribute('aria-invalid');
}

function buildForm(endpoint) {
  const form = new FormData();
  const rbapi = endpoint === 'removebg';
  if (radio('source') === 'file') {
    const file = $('file').files[0];
    if (file) form.append(rbapi ? 'image_file' : 'input', file, file.name);
  } else if ($('url').value) {
    form.append(rbapi ? 'image_url' : 'input', $('url').value);
  }
  if (rbapi) {
    form.append('size', $('rb-size').value);
    form.append('crop', String($('rb-crop').checked));
    if ($('rb-bg').value.trim()) form.append('bg_color', $('rb-bg').value.trim());
    form.append('format', $('format').value);
    return form;
  }
  if (endpoint === 'edit') {
    const operations = radio('opsmode') === 'json' ? $('ops-json').value : JSON.stringify(formOperations());
    form.append('operations', operations);
    form.append('quality', $('quality').value);
    form.append('anim', String($('anim').checked));
  } else {
    form.append('trim', String($('trim').checked));
    if ($('trim-margin').value.trim()) form.append('trim_margin', $('trim-margin').value.trim());
    form.append('channels', $('channels').value);
    if ($('model').value.trim()) form.append('model', $('model').value.trim());
    // The staging of the cut-out (docs/api.md, "Extensions: staged cut-outs").
    if ($('rb-size').value) form.append('size', $('rb-size').value);
    if ($('rb-shadow').value) form.append('shadow', $('rb-shadow').value);
    if ($('rb-background').value.trim()) form.append('background', $('rb-background').value.trim());
    const place = placeValue({ scale: $('rb-scale').value, position: $('rb-position').value, xy: '', aspectRatio: $('rb-aspect').value, margin: '' });
    if (Object.keys(place).length) form.append('place', JSON.stringify(place));
  }
  // An edit takes it only for a backgroundImage operation (the server refuses it otherwise).
  const backdrop = $('background-image').files[0];
  if (backdrop && (endpoint !== 'edit' || form.get('operations').includes('backgroundImage'))) form.append('background_image', backdrop, backdrop.name);
  form.append('format', $('format').value);
  form.append('output', $('output').value);
  return form;
}

async function run(event) {
  event.preventDefault();
  clearError();
  storeKey();
  const endpoint = radio('endpoint');
  const status = $('status');
  $('run').disabled = true;
  status.textContent = 'running…';
  const started = performance.now();
  try {
    const path = endpoint === 'removebg' ? 'v1.0/removebg' : `images/${endpoint}`;
    const response = await fetch(new URL(path, document.baseURI), {
      method: 'POST',
      headers: { 'X-Api-Key': $('key').value },
      body: buildForm(endpoint),
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      status.textContent = `failed in ${Math.round(performance.now() - started)} ms`;
      // remove.bg's API answers {"errors": [{title, code, detail}]}, matte's own {"error": {code, message, path}}.
      const removeBg = body.errors?.[0] && { code: body.errors[0].code, message: body.errors[0].detail ?? body.errors[0].title };
      showError(body.error ?? removeBg ?? { code: 'http_error', message: response.statusText }, response.status);
      if (!$('result-img').hidden) $('result-info').textContent = '(from the previous run)';
      return;
    }
    let blob;
    let link;
    if ($('output').value === 'url' && endpoint !== 'removebg') {
      const { url } = await response.json();
      link = url;
      // The stored result is fetched from the link it gave (same origin unless MATTE_PUBLIC_URL says otherwise).
      blob = await fetch(url).then((r) => (r.ok ? r.blob() : undefined)).catch(() => undefined);
    } else {
      blob = await response.blob();
    }
    const ms = Math.round(performance.now() - started);
    if (resultUrl) URL.revokeObjectURL(resultUrl);
    resultUrl = blob ? URL.createObjectURL(blob) : undefined;
    const img = $('result-img');
    img.onload = () => {
      img.hidden = false;
      const type = blob?.type || $('format').value;
      $('result-info').textContent = `${img.naturalWidth}×${img.naturalHeight}, ${blob ? formatBytes(blob.size) : '? bytes'}, ${type}, ${ms} ms`;
    };
    img.onerror = () => {
      img.hidden = true;
      $('result-info').textContent = `${blob ? formatBytes(blob.size) : ''} ${blob?.type ?? ''}: this browser cannot show it; ${ms} ms`;
    };
    img.src = resultUrl ?? link;
    // A zip (remove.bg's format=zip) cannot be shown: its link downloads it.
    if (blob?.type === 'application/zip') link = resultUrl;
    const anchor = $('result-link');
    anchor.hidden = !link;
    if (link) anchor.href = link;
    status.textContent = `done in ${ms} ms`;
  } catch (err) {
    status.textContent = '';
    showError({ code: 'network_error', message: err.message });
  } finally {
    $('run').disabled = false;
  }
}
$('job').addEventListener('submit', run);

// A first operation, so that Run works as soon as an image is chosen.
addOperation('resize');
showEndpoint();
showSource();

// The models a request may name are the ones the server loaded: /readyz lists them, the default first.
fetch(new URL('readyz', document.baseURI))
  .then((r) => r.json())
  .then((body) => {
    if (!Array.isArray(body.models) || !body.models.length) return;
    $('models').replaceChildren(...body.models.map((name) => new Option(name, name)));
    $('model').placeholder = body.models[0];
    $('model').title = `loaded by this server: ${body.models.join(', ')}`;
  })
  .catch(() => {});
