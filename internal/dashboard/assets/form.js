// An elicitation's form: the inputs of a requestedSchema (docs/dashboard.md,
// "Forms"). Every label, hint, option and default from the agent is set
// as text or as a value, never parsed.

const el = (tag, cls, text) => {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined) n.textContent = text;
  return n;
};

// formFields builds the inputs of an elicitation's requestedSchema: text,
// numbers, booleans, single choices (enum, oneOf) and multiple choices
// (an array of enum or anyOf items). Every label and default is text.
export function formFields(schema, qid) {
  const props = schema && typeof schema.properties === "object" && schema.properties ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const out = [];
  let i = 0;
  for (const [name, p0] of Object.entries(props)) {
    const p = p0 && typeof p0 === "object" ? p0 : {};
    const id = `el-${qid}-${i++}`;
    const label = String(p.title || name);
    const wrap = el("div", "field");
    const hint = p.description ? el("span", "muted field-hint", String(p.description)) : null;
    if (hint) hint.id = id + "-hint";
    const req = required.has(name);
    const choices = choicesOf(p);
    const items = p.type === "array" && p.items && typeof p.items === "object" ? choicesOf(p.items) : null;
    if (items) {
      // Several choices: checkboxes in a fieldset.
      const fs = el("fieldset", "choices");
      fs.append(el("legend", "", label));
      if (hint) fs.append(hint);
      const boxes = items.map((c, j) => {
        const l = el("label", "choice");
        const cb = el("input");
        cb.type = "checkbox";
        cb.value = c.value;
        cb.id = `${id}-${j}`;
        cb.checked = Array.isArray(p.default) && p.default.includes(c.raw);
        l.append(cb, document.createTextNode(" " + c.label));
        fs.append(l);
        return cb;
      });
      wrap.append(fs);
      out.push({ name, node: wrap, value: () => items.filter((c, j) => boxes[j].checked).map((c) => c.raw) });
      continue;
    }
    const l = el("label", "", label + (req ? " *" : ""));
    l.htmlFor = id;
    let input, value;
    if (choices) {
      input = el("select");
      if (!req) input.append(el("option", "", "—"));
      for (const c of choices) {
        const o = el("option", "", c.label);
        o.value = c.value;
        o.selected = p.default === c.raw;
        input.append(o);
      }
      if (!req) input.firstChild.value = "";
      value = () => (input.value === "" ? undefined : (choices.find((c) => c.value === input.value) || {}).raw);
    } else if (p.type === "boolean") {
      input = el("input");
      input.type = "checkbox";
      input.checked = p.default === true;
      value = () => input.checked;
    } else if (p.type === "number" || p.type === "integer") {
      input = el("input");
      input.type = "number";
      input.step = p.type === "integer" ? "1" : "any";
      if (typeof p.minimum === "number") input.min = String(p.minimum);
      if (typeof p.maximum === "number") input.max = String(p.maximum);
      if (typeof p.default === "number") input.value = String(p.default);
      value = () => (input.value === "" ? undefined : Number(input.value));
    } else {
      input = el("input");
      input.type = { email: "email", uri: "url", date: "date" }[p.format] || "text";
      if (typeof p.minLength === "number") input.minLength = p.minLength;
      if (typeof p.maxLength === "number") input.maxLength = p.maxLength;
      if (typeof p.default === "string") input.value = p.default;
      value = () => (input.value === "" && !req ? undefined : input.value);
    }
    input.id = id;
    input.name = name;
    if (req && input.type !== "checkbox") input.required = true;
    if (hint) input.setAttribute("aria-describedby", hint.id);
    wrap.append(l, input);
    if (hint) wrap.append(hint);
    out.push({ name, node: wrap, value });
  }
  return out;
}

// choicesOf reads a single choice's options: enum (with enumNames) or
// oneOf/anyOf of {const, title}; null when the property is no choice.
function choicesOf(p) {
  if (Array.isArray(p.enum)) {
    return p.enum.map((v, i) => ({ value: String(v), raw: v, label: String((Array.isArray(p.enumNames) && p.enumNames[i]) || v) }));
  }
  const alts = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : null;
  if (alts && alts.every((a) => a && a.const !== undefined)) {
    return alts.map((a) => ({ value: String(a.const), raw: a.const, label: String(a.title || a.const) }));
  }
  return null;
}
