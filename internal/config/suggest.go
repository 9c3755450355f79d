package config

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Nearest is the candidate closest to a mistyped name: one that differs only
// in case, else the nearest at most two edits away (a third of the name's
// length for short names), or "". It is the one "did you mean …?" of corvid's
// configuration: providers, config keys, catalog model ids.
func Nearest(name string, candidates []string) string {
	best, bestDist := "", min(3, max(1, len(name)/3)+1)
	lower := strings.ToLower(name)
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c
		}
		if d := editDistance(lower, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// nearestKey is the known key closest to an unknown one of config.toml,
// with its table path ("permissions.allow"), or "".
func nearestKey(key toml.Key) string {
	if len(key) == 0 {
		return ""
	}
	types := []reflect.Type{reflect.TypeFor[File]()}
	parts := key[:len(key)-1]
	for i := 0; i < len(parts); i++ {
		var next []reflect.Type
		for _, t := range types {
			f, ok := fieldByTag(t, parts[i])
			switch {
			case !ok:
			case parts[i] == "providers" && t == reflect.TypeFor[File]():
				// [providers.NAME]: a built-in's settings or a custom provider.
				next = append(next, reflect.TypeFor[ProviderSettings](), reflect.TypeFor[CustomProvider]())
				i++ // NAME
			case f.Type.Kind() == reflect.Map:
				next = append(next, f.Type.Elem())
				i++ // the map's key
			default:
				next = append(next, f.Type)
			}
		}
		types = next
	}
	var known []string
	for _, t := range types {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			continue
		}
		for f := range t.Fields() {
			if tag := tomlName(f); tag != "" {
				known = append(known, tag)
			}
		}
	}
	near := Nearest(key[len(key)-1], known)
	if near == "" {
		return ""
	}
	return toml.Key(append(append([]string(nil), key[:len(key)-1]...), near)).String()
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for f := range t.Fields() {
		if tomlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tomlName(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	if tag == "" {
		return f.Name
	}
	return tag
}
