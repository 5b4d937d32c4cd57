// The ten operations of POST /images/edit as form fields: each kind lists its fields, how they
// become the operation's JSON value (toValue) and how a JSON value fills them (fromValue).
// Values are sent as typed: the server validates them and its errors point at the field.

const num = (text) => (text.trim() === '' ? null : Number(text));
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
      { name: 'fit', label: 'fit', type: 'select', options: ['', 'contain', 'cover', 'scale-down', 'crop'] },
    ],
    toValue(f) {
      const value = {};
      if (f.width.trim() !== '') value.width = num(f.width);
      if (f.height.trim() !== '') value.height = num(f.height);
      if (f.fit) value.fit = f.fit;
      return value;
    },
    fromValue: (v) => ({ width: v?.width === undefined ? '' : String(v.width), height: v?.height === undefined ? '' : String(v.height), fit: v?.fit ?? '' }),
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
};

export const OPERATION_NAMES = Object.keys(OPERATIONS);
