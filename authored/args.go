package authored

import "math"

// maxExactInt is the largest integer a float64 holds exactly (2^53).
const maxExactInt = 1 << 53

// integralNumbers returns a copy of v in which every float64 holding an
// exact integer is an int64. Arguments reach the Host as JSON decoded into
// float64, which would hand authored code 3.0 where the model wrote 3 (and
// range(args["n"]) would fail); JSON itself does not distinguish the two.
func integralNumbers(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= maxExactInt {
			return int64(x)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = integralNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = integralNumbers(e)
		}
		return out
	}
	return v
}
