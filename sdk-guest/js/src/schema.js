/**
 * A small JSON Schema helper, `s`, for tool arguments, results and extension requests. Every
 * helper answers a plain JSON Schema object, so a schema written by hand works wherever a helper's
 * does; the helpers only add what JSON cannot say: which properties are optional (`s.optional`)
 * and which schemas are shared definitions (`s.named`, listed once under `$defs`).
 * @module
 */

/** Schemas marked optional by `s.optional`: left out of their object's `required`. */
const OPTIONAL = new WeakSet();
/** `$ref` schemas made by `s.named`, each with its definition's name and schema. */
const NAMED = new WeakMap();

/**
 * Copies `keywords` into a schema after `base`; `undefined` values are left out.
 * @param {object} base
 * @param {object} [keywords]
 */
function withKeywords(base, keywords = {}) {
  const schema = { ...base };
  for (const [key, value] of Object.entries(keywords)) {
    if (value !== undefined) schema[key] = value;
  }
  return schema;
}

/** The JSON Schema helpers. */
export const s = {
  /** `{"type": "string", ...keywords}`, e.g. `s.string({description: "The channel."})`. */
  string: (keywords) => withKeywords({ type: "string" }, keywords),
  /** `{"type": "integer", ...keywords}`. */
  integer: (keywords) => withKeywords({ type: "integer" }, keywords),
  /** `{"type": "number", ...keywords}`. */
  number: (keywords) => withKeywords({ type: "number" }, keywords),
  /** `{"type": "boolean", ...keywords}`. */
  boolean: (keywords) => withKeywords({ type: "boolean" }, keywords),
  /** `{"type": "array", "items": items, ...keywords}`. */
  array: (items, keywords) => withKeywords({ type: "array", items }, keywords),
  /**
   * `{"type": "object", "properties": ..., "required": [...], ...keywords}`: every property is
   * required unless marked with `s.optional`; `required` is left out when empty.
   * @param {Record<string, object>} properties
   * @param {object} [keywords]
   */
  object(properties = {}, keywords) {
    const required = Object.keys(properties).filter((key) => !OPTIONAL.has(properties[key]));
    const base = { type: "object", properties };
    if (required.length > 0) base.required = required;
    return withKeywords(base, keywords);
  },
  /** The schema, also allowing null: `{"type": [t, "null"]}` for a single type, else an `anyOf`. */
  nullable(schema) {
    if (typeof schema.type === "string") return { ...schema, type: [schema.type, "null"] };
    return { anyOf: [schema, { type: "null" }] };
  },
  /**
   * The schema of a property that may be left out, with its default (null unless given): the
   * handler receives the default when the caller leaves the property out.
   */
  optional(schema, defaultValue = null) {
    const optional = { ...schema, default: defaultValue };
    OPTIONAL.add(optional);
    return optional;
  },
  /**
   * A shared definition: answers `{"$ref": "#/$defs/<name>"}`, and the tool's schema lists
   * `schema` once under `$defs`.
   */
  named(name, schema) {
    const ref = { $ref: `#/$defs/${name}` };
    NAMED.set(ref, { name, schema });
    return ref;
  },
};

/**
 * The `$defs` that a schema's `s.named` references need, by name (definitions' own references
 * included), in first-use order.
 * @param {unknown} schema
 * @returns {Record<string, object>}
 */
function collectDefinitions(schema, defs = {}) {
  if (Array.isArray(schema)) {
    for (const item of schema) collectDefinitions(item, defs);
  } else if (schema !== null && typeof schema === "object") {
    const named = NAMED.get(schema);
    if (named !== undefined) {
      if (defs[named.name] === undefined) {
        defs[named.name] = named.schema;
        collectDefinitions(named.schema, defs);
      }
      return defs;
    }
    for (const value of Object.values(schema)) collectDefinitions(value, defs);
  }
  return defs;
}

/** The schema with its `$defs` appended, when it references any. */
function withDefinitions(schema, references = schema) {
  const defs = collectDefinitions(references);
  return Object.keys(defs).length > 0 ? { ...schema, $defs: defs } : schema;
}

/**
 * The arguments or request schema of a tool or extension method: an object schema of
 * `properties` (see `s.object`), titled `title` when given.
 * @param {Record<string, object>} properties
 * @param {string|undefined} title
 */
export function inputSchema(properties, title) {
  const schema = s.object(properties);
  if (title === undefined) return withDefinitions(schema);
  schema.title = title;
  return pydanticForm(withDefinitions(schema));
}

/** pydantic's default title of a field: `max_count` → `Max Count`. */
function titleOf(name) {
  return name
    .split("_")
    .map((word) => (word === "" ? "" : word[0].toUpperCase() + word.slice(1).toLowerCase()))
    .join(" ");
}

/** Whether `schema` only refers to a definition (itself or with `null`): pydantic titles no such field. */
function refers(schema) {
  if ("$ref" in schema) return true;
  const any = schema.anyOf;
  return Array.isArray(any) && any.length === 2 && any.some((x) => "$ref" in x) && any.some((x) => x.type === "null");
}

const VALUE_KEYS = new Set(["default", "enum", "const", "examples"]);

function titled(schema) {
  if (Array.isArray(schema)) return schema.map(titled);
  if (schema === null || typeof schema !== "object") return schema;
  let out = { ...schema };
  if (Array.isArray(out.type)) {
    const notNull = out.type.filter((t) => t !== "null");
    if (notNull.length === 1 && notNull.length < out.type.length) {
      const inner = { type: notNull[0] };
      const outer = {};
      for (const [key, value] of Object.entries(out)) {
        if (key === "type") continue;
        if (key === "title" || key === "description" || key === "default") outer[key] = value;
        else inner[key] = value;
      }
      out = { ...outer, anyOf: [titled(inner), { type: "null" }] };
    }
  }
  for (const [key, value] of Object.entries(out)) {
    if (key === "properties" && value !== null && typeof value === "object") {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, prop]) => {
          const done = titled(prop);
          if (done !== null && typeof done === "object" && !("title" in done) && !refers(done)) done.title = titleOf(name);
          return [name, done];
        }),
      );
    } else if (key === "$defs" && value !== null && typeof value === "object") {
      out.$defs = Object.fromEntries(
        Object.entries(value).map(([name, def]) => {
          const done = titled(def);
          if (done !== null && typeof done === "object" && !("title" in done)) done.title = name;
          return [name, done];
        }),
      );
    } else if (!VALUE_KEYS.has(key)) {
      out[key] = titled(value);
    }
  }
  return out;
}

/** Sorts keys recursively but a `properties` object's and a `default`'s, as pydantic does. */
function sortKeys(value, parent = null) {
  if (Array.isArray(value)) return value.map((v) => sortKeys(v, parent));
  if (value === null || typeof value !== "object") return value;
  const keys = parent === "properties" || parent === "default" ? Object.keys(value) : Object.keys(value).sort();
  return Object.fromEntries(keys.map((k) => [k, k === "default" ? value[k] : sortKeys(value[k], k)]));
}

/**
 * `schema` as pydantic writes the same type (protocol.md#tool-listing): `["T", "null"]` types as
 * `anyOf` with `null`, every property titled after its name (but a reference to a definition),
 * every definition titled after its name, keys sorted as pydantic sorts them.
 * @param {object} schema
 */
export function pydanticForm(schema) {
  return sortKeys(titled(schema));
}

/** How a tool's return value becomes structured content. */
export const Shape = Object.freeze({
  /** No output schema and no structured content. */
  UNSTRUCTURED: "unstructured",
  /** `{"result": value}`. */
  WRAPPED: "wrapped",
  /** The value itself (objects). */
  OBJECT: "object",
});

/**
 * The shape and output schema of a tool that returns `returns` (protocol.md#tool-listing), as the reference SDK
 * derives them: no schema, no structured content; an object schema (or a named one) as it is;
 * anything else wrapped as `{"result": value}` under a schema titled `title`.
 * @param {object|undefined} returns
 * @param {string} title
 * @returns {{shape: string, schema: object|null}}
 */
export function outputShape(returns, title) {
  if (returns === undefined) return { shape: Shape.UNSTRUCTURED, schema: null };
  const named = NAMED.get(returns);
  const resolved = named === undefined ? returns : { ...named.schema, title: named.name };
  if (resolved.type === "object") {
    return {
      shape: Shape.OBJECT,
      schema: pydanticForm(withDefinitions(resolved, named === undefined ? resolved : named.schema)),
    };
  }
  const wrapped = { type: "object", properties: { result: returns }, required: ["result"], title };
  return { shape: Shape.WRAPPED, schema: pydanticForm(withDefinitions(wrapped)) };
}

/** How a JSON value reads in a type error, as serde words it: integer `5`, string "x", map... */
function describeValue(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "sequence";
  switch (typeof value) {
    case "boolean":
      return `boolean \`${value}\``;
    case "number":
      return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
    case "string":
      return `string ${JSON.stringify(value)}`;
    default:
      return "map";
  }
}

/** What a JSON Schema type expects, as serde words it. */
const EXPECTED = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "a boolean",
  array: "a sequence",
  object: "a map",
  null: "null",
};

/** Whether `value` is of JSON Schema type `type`. */
function isOfType(value, type) {
  switch (type) {
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return value !== null && typeof value === "object" && !Array.isArray(value);
    case "integer":
      return Number.isInteger(value);
    default:
      return typeof value === type;
  }
}

/**
 * The first type mismatch of `value` against `schema`'s `type`, `items` and `properties`
 * keywords (named definitions resolved), as `invalid type: <value>, expected <type> at '<path>'`;
 * null when it matches. The host checks an extension request's required and unknown keys; this
 * checks its types, as the Rust SDK's typed requests do.
 * @param {unknown} value
 * @param {object} schema
 * @param {string} [path]
 * @returns {string|null}
 */
export function typeMismatch(value, schema, path = "") {
  const named = NAMED.get(schema);
  if (named !== undefined) return typeMismatch(value, named.schema, path);
  if (schema === null || typeof schema !== "object") return null;
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((type) => isOfType(value, type))) {
      const expected = types.map((type) => EXPECTED[type] ?? type).join(" or ");
      return `invalid type: ${describeValue(value)}, expected ${expected}${path === "" ? "" : ` at '${path}'`}`;
    }
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    for (const [i, item] of value.entries()) {
      const mismatch = typeMismatch(item, schema.items, `${path}[${i}]`);
      if (mismatch !== null) return mismatch;
    }
  }
  if (isOfType(value, "object") && schema.properties !== undefined) {
    for (const [key, property] of Object.entries(schema.properties)) {
      if (!Object.hasOwn(value, key)) continue;
      const mismatch = typeMismatch(value[key], property, path === "" ? key : `${path}.${key}`);
      if (mismatch !== null) return mismatch;
    }
  }
  return null;
}
