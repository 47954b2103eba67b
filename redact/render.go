package redact

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// errRenderPanicked reports that fmt recovered a panic while rendering a
// value; the rendered text is then not trusted.
var errRenderPanicked = errors.New("redact: rendering a value panicked")

// isScalar reports JSON scalars that are copied unchanged.
func isScalar(v any) bool {
	switch v.(type) {
	case nil, bool, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64, json.Number:
		return true
	}
	return false
}

// shallow turns a value that is not one of the JSON shapes (nil, bool,
// number, string, map[string]any, []any) into one, one level deep: maps
// become map[string]any with fmt-rendered keys, slices and arrays []any,
// pointers and interfaces their target, []byte a string, errors and
// Stringers their text, anything else its fmt %v rendering. Methods are
// called directly so that a panic in them propagates to the caller's
// recovery instead of being printed into the output by fmt.
func shallow(v any) (any, error) {
	switch x := v.(type) {
	case []byte:
		return strings.ToValidUTF8(string(x), "\uFFFD"), nil
	case error:
		return x.Error(), nil
	case fmt.Stringer:
		return x.String(), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return rv.Elem().Interface(), nil
	case reflect.Map:
		if rv.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			k, err := render(it.Key().Interface())
			if err != nil {
				return nil, err
			}
			out[k] = it.Value().Interface()
		}
		return out, nil
	case reflect.Slice:
		if rv.IsNil() {
			return nil, nil
		}
		fallthrough
	case reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).Interface()
		}
		return out, nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint(), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	}
	return render(v)
}

// safeShallow is shallow for discovery, which must not panic: a value whose
// rendering panics is skipped there, and the views fail on it instead.
func safeShallow(v any) (out any, err error) {
	defer func() {
		if recover() != nil {
			out, err = nil, errRenderPanicked
		}
	}()
	return shallow(v)
}

// render returns the text of a non-JSON value.
func render(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case error:
		return x.Error(), nil
	case fmt.Stringer:
		return x.String(), nil
	}
	s := fmt.Sprintf("%v", v)
	if strings.Contains(s, "(PANIC=") {
		return "", errRenderPanicked
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s, nil
}
