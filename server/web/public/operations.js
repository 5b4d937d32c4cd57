// The operations of POST /images/edit as form fields (the specification's ten, then the staged
// cut-outs' and the responsive images' extensions): each kind lists its fields, how they become
// the operation's JSON value (toValue) and how a JSON value fills them (fromValue).
// Values are sent as typed: the server validates them and its errors point at the field.

const num = (text) => (text.trim() === '' ? null : Number(text));
const text = (x) => (x === undefined ? '' : String(x));
const SIDES = ['top', 'right', 'bottom', 'left'];
const sideFields = SIDES.map((name) => ({ name, label: `${name} (px)`, type: 'number', min: '0', max: '10000', value: '' }));
/** The sides given (extend, crop). */
function sides(f) {
  const value = {};
  for (const side of SIDES) if (f[side].trim() !== '') value[side] = num(f[side]);
  return value;
}
const COMPASS = ['centre', 'north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest'];
const FOCAL = 'x,y (0-1)';

const multiplier = (label) => ({
  fields: [{ name: 'value', label, type: 'number', step: '0.1', min: '0', value: '1' }],
  toValue: (f) => num(f.value),
  fromValue: (v) => ({ value: String(v) }),
});

export const OPERATIONS = {
  resize: {
    fields: [
      { name: 'width', label: 'width', type: 'number', min: '1', max: '10000', value: '800' },
      { name: 'height', label: 'height', type: 'number', min: '1', max: '10000', value: '' },
      { name: 'fit', label: 'fit', type: 'select', options: ['', 'contain', 'cover', 'scale-down', 'crop', 'pad', 'fill'] },
      // Extensions (docs/api.md, "Extensions: responsive images").
      { name: 'gravity', label: 'gravity (cover, crop, pad)', type: 'select', options: ['', ...COMPASS, 'subject', 'attention', FOCAL] },
      { name: 'focus', label: 'x,y (0-1)', type: 'text', value: '' },
      { name: 'enlarge', label: 'enlarge', type: 'select', options: ['', 'true', 'false'] },
      { name: 'keepBoxAspect', label: 'keep box aspect (no enlarge)', type: 'select', options: ['', 'true'] },
      { name: 'dpr', label: 'dpr (1-4)', type: 'number', step: '0.5', min: '1', max: '4', value: '' },
      { name: 'background', label: 'pad colour', type: 'text', value: '' },
    ],
    toValue(f) {
      const value = {};
      if (f.width.trim() !== '') value.width = num(f.width);
      if (f.height.trim() !== '') value.height = num(f.height);
      if (f.fit) value.fit = f.fit;
      if (f.gravity === FOCAL) {
        const [x, y] = f.focus.split(',').map((t) => num(t));
        value.gravity = { x, y };
      } else if (f.gravity) value.gravity = f.gravity;
      if (f.enlarge) value.enlarge = f.enlarge === 'true';
      if (f.keepBoxAspect) value.keepBoxAspect = true;
      if (f.dpr.trim() !== '') value.dpr = num(f.dpr);
      if (f.background.trim()) value.background = f.background.trim();
      return value;
    },
    fromValue: (v) => {
      const o = typeof v === 'object' && v ? v : {};
      const focal = typeof o.gravity === 'object' && o.gravity;
      return {
        width: text(o.width),
        height: text(o.height),
        fit: o.fit ?? '',
        gravity: focal ? FOCAL : o.gravity === 'center' ? 'centre' : (o.gravity ?? ''),
        focus: focal ? `${o.gravity.x},${o.gravity.y}` : '',
        enlarge: text(o.enlarge),
        keepBoxAspect: o.keepBoxAspect ? 'true' : '',
        dpr: text(o.dpr),
        background: text(o.background),
      };
    },
  },
  rotate: {
    fields: [{ name: 'angle', label: 'degrees clockwise', type: 'select', options: ['90', '180', '270'] }],
    toValue: (f) => Number(f.angle),
    fromValue: (v) => ({ angle: String(v) }),
  },
  flip: {
    fields: [{ name: 'axis', label: 'direction', type: 'select', options: ['h', 'v', 'hv'] }],
    toValue: (f) => f.axis,
    fromValue: (v) => ({ axis: String(v) }),
  },
  blur: {
    fields: [{ name: 'radius', label: 'radius (0-250)', type: 'number', step: '0.5', min: '0', max: '250', value: '2' }],
    toValue: (f) => num(f.radius),
    fromValue: (v) => ({ radius: String(v) }),
  },
  brightness: multiplier('multiplier (1 unchanged)'),
  contrast: multiplier('multiplier (1 unchanged)'),
  saturation: multiplier('multiplier (1 unchanged, 0 grey)'),
  background: {
    fields: [{ name: 'colour', label: 'CSS colour', type: 'text', value: '#ffffff' }],
    toValue: (f) => f.colour,
    fromValue: (v) => ({ colour: String(v) }),
  },
  removeBackground: {
    fields: [{ name: 'model', label: 'model (optional)', type: 'text', value: '', list: 'models' }],
    toValue: (f) => (f.model.trim() ? { model: f.model.trim() } : true),
    fromValue: (v) => ({ model: typeof v === 'object' && v && v.model ? String(v.model) : '' }),
  },
  trim: {
    fields: [],
    toValue: () => true,
    fromValue: () => ({}),
  },
  // Extensions (docs/api.md, "Extensions: staged cut-outs").
  size: {
    fields: [
      { name: 'size', label: 'size', type: 'select', options: ['preview', 'medium', 'hd', 'full', 'auto', 'megapixels'] },
      { name: 'megapixels', label: 'megapixels (0.01-100)', type: 'number', step: '0.1', min: '0.01', max: '100', value: '' },
    ],
    toValue: (f) => (f.size === 'megapixels' ? { megapixels: num(f.megapixels) } : f.size),
    fromValue: (v) => (typeof v === 'object' && v ? { size: 'megapixels', megapixels: String(v.megapixels) } : { size: String(v), megapixels: '' }),
  },
  shadow: {
    fields: [
      { name: 'type', label: 'type', type: 'select', options: ['drop', 'contact'] },
      { name: 'opacity', label: 'opacity (0-1)', type: 'number', step: '0.05', min: '0', max: '1', value: '' },
      { name: 'blur', label: 'blur (px)', type: 'number', min: '0', max: '250', value: '' },
      { name: 'offsetX', label: 'offset x (px)', type: 'number', value: '' },
      { name: 'offsetY', label: 'offset y (px)', type: 'number', value: '' },
      { name: 'color', label: 'colour', type: 'text', value: '' },
    ],
    toValue(f) {
      const value = { type: f.type };
      for (const key of ['opacity', 'blur', 'offsetX', 'offsetY']) if (f[key].trim() !== '') value[key] = num(f[key]);
      if (f.color.trim()) value.color = f.color.trim();
      return value;
    },
    fromValue: (v) => {
      const o = typeof v === 'object' && v ? v : {};
      const text = (x) => (x === undefined ? '' : String(x));
      return { type: o.type ?? 'drop', opacity: text(o.opacity), blur: text(o.blur), offsetX: text(o.offsetX), offsetY: text(o.offsetY), color: text(o.color) };
    },
  },
  backgroundImage: {
    fields: [],
    toValue: () => true,
    fromValue: () => ({}),
  },
  place: {
    fields: [
      { name: 'scale', label: 'scale (10-100 %)', type: 'number', min: '10', max: '100', value: '80' },
      { name: 'position', label: 'position', type: 'select', options: ['', 'center', 'original', 'x,y %'] },
      { name: 'xy', label: 'x,y %', type: 'text', value: '' },
      { name: 'aspectRatio', label: 'aspect ratio (W:H)', type: 'text', value: '' },
      { name: 'margin', label: 'margin (px or %)', type: 'text', value: '' },
    ],
    toValue: (f) => placeValue(f),
    fromValue: (v) => placeFields(v),
  },
  // Extensions (docs/api.md, "Extensions: responsive images").
  sharpen: {
    fields: [
      { name: 'sigma', label: 'sigma (0-10)', type: 'number', step: '0.1', min: '0', max: '10', value: '1' },
      { name: 'flat', label: 'flat (0-100)', type: 'number', step: '0.5', min: '0', max: '100', value: '' },
      { name: 'jagged', label: 'jagged (0-100)', type: 'number', step: '0.5', min: '0', max: '100', value: '' },
    ],
    toValue(f) {
      if (f.flat.trim() === '' && f.jagged.trim() === '') return num(f.sigma);
      const value = { sigma: num(f.sigma) };
      if (f.flat.trim() !== '') value.flat = num(f.flat);
      if (f.jagged.trim() !== '') value.jagged = num(f.jagged);
      return value;
    },
    fromValue: (v) => (typeof v === 'object' && v ? { sigma: text(v.sigma), flat: text(v.flat), jagged: text(v.jagged) } : { sigma: text(v), flat: '', jagged: '' }),
  },
  gamma: {
    fields: [{ name: 'value', label: 'gamma (0.1-10, > 1 brightens)', type: 'number', step: '0.1', min: '0.1', max: '10', value: '2.2' }],
    toValue: (f) => num(f.value),
    fromValue: (v) => ({ value: String(v) }),
  },
  extend: {
    fields: [...sideFields, { name: 'background', label: 'colour', type: 'text', value: '' }],
    toValue(f) {
      const value = sides(f);
      if (f.background.trim()) value.background = f.background.trim();
      return value;
    },
    fromValue: (v) => Object.fromEntries([...SIDES, 'background'].map((k) => [k, text(v?.[k])])),
  },
  crop: {
    fields: sideFields,
    toValue: (f) => sides(f),
    fromValue: (v) => Object.fromEntries(SIDES.map((k) => [k, text(v?.[k])])),
  },
};

/** The place operation's value from its form fields (shared with the remove-background staging). */
export function placeValue(f) {
  const value = {};
  if (f.scale.trim() !== '') value.scale = num(f.scale);
  if (f.position === 'x,y %') {
    const [x, y] = f.xy.split(',').map((t) => num(t));
    value.position = { x, y };
  } else if (f.position) value.position = f.position;
  if (f.aspectRatio.trim()) value.aspectRatio = f.aspectRatio.trim();
  if (f.margin.trim()) value.margin = /%$/.test(f.margin.trim()) ? f.margin.trim() : num(f.margin);
  return value;
}

function placeFields(v) {
  const o = typeof v === 'object' && v ? v : {};
  const position = typeof o.position === 'object' && o.position ? 'x,y %' : (o.position ?? '');
  return {
    scale: o.scale === undefined ? '' : String(o.scale),
    position,
    xy: position === 'x,y %' ? `${o.position.x},${o.position.y}` : '',
    aspectRatio: o.aspectRatio ?? '',
    margin: o.margin === undefined ? '' : String(o.margin),
  };
}

export const OPERATION_NAMES = Object.keys(OPERATIONS);
