package codemode

import (
	"encoding/json"
	"fmt"

	"go.starlark.net/starlark"
)

// toGo converts a Starlark value to a JSON value.
func toGo(v starlark.Value) (any, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(v), nil
	case starlark.Int:
		if i, ok := v.Int64(); ok {
			return i, nil
		}
		return json.Number(v.BigInt().Text(10)), nil
	case starlark.Float:
		return float64(v), nil
	case starlark.String:
		return string(v), nil
	case *starlark.List:
		return seq(v)
	case starlark.Tuple:
		return seq(v)
	case *starlark.Dict:
		out := make(map[string]any, v.Len())
		for _, kv := range v.Items() {
			k, ok := starlark.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("dict key %s is not a string", kv[0])
			}
			x, err := toGo(kv[1])
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %s cannot be passed to a tool", v.Type())
}

func seq(it starlark.Indexable) ([]any, error) {
	out := make([]any, it.Len())
	for i := range out {
		x, err := toGo(it.Index(i))
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// display is how the script's result is shown: a string as it is, anything
// JSON can hold as JSON, the rest as Starlark prints it.
func display(v starlark.Value) string {
	if s, ok := v.(starlark.String); ok {
		return string(s)
	}
	if g, err := toGo(v); err == nil {
		if b, err := json.Marshal(g); err == nil {
			return string(b)
		}
	}
	return v.String()
}
