package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// Param is one integer parameter of a design (a margin, a grace period, a
// delay), with the range the design makes sense over.
type Param struct {
	Name    string `json:"name"`    // the parameter's name (explore sweep --param NAME=lo..hi)
	Min     int    `json:"min"`     // the range of values At accepts: Min..Max
	Max     int    `json:"max"`     //
	Default int    `json:"default"` // the value the catalogue's entry uses
	Doc     string `json:"doc"`     // one line on what it is
}

// With returns the variant at the parameter values vals (by name; a name
// not given keeps its default), named NAME@p=v,... in Params' order so that
// LookupVariant finds it again (history headers, explore replay). A variant
// without parameters, an unknown name or a value out of range is an error.
func (v Variant) With(vals map[string]int) (Variant, error) {
	if len(v.Params) == 0 || v.At == nil {
		return Variant{}, fmt.Errorf("variant %s has no parameters", v.Name)
	}
	at := make([]int, len(v.Params))
	used := 0
	var parts []string
	for i, p := range v.Params {
		x, ok := vals[p.Name]
		if !ok {
			x = p.Default
		} else {
			used++
		}
		if x < p.Min || x > p.Max {
			return Variant{}, fmt.Errorf("variant %s: %s=%d out of range [%d, %d]", v.Name, p.Name, x, p.Min, p.Max)
		}
		at[i] = x
		parts = append(parts, p.Name+"="+strconv.Itoa(x))
	}
	if used != len(vals) {
		return Variant{}, fmt.Errorf("variant %s: unknown parameter (its parameters: %s)", v.Name, strings.Join(v.ParamNames(), ", "))
	}
	w := v.At(at)
	w.Name = v.Name + "@" + strings.Join(parts, ",")
	w.Params, w.At = v.Params, v.At
	return w, nil
}

// ParamNames lists the variant's parameter names.
func (v Variant) ParamNames() []string {
	names := make([]string, len(v.Params))
	for i, p := range v.Params {
		names[i] = p.Name
	}
	return names
}

// Param returns the variant's parameter called name.
func (v Variant) Param(name string) (Param, bool) {
	for _, p := range v.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// parseParams parses "p=v,q=w" (the part of a variant name after @).
func parseParams(s string) (map[string]int, error) {
	vals := map[string]int{}
	for _, kv := range strings.Split(s, ",") {
		k, x, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(x)
		if !ok || k == "" || err != nil {
			return nil, fmt.Errorf("parameter %q: want NAME=INTEGER", kv)
		}
		if _, dup := vals[k]; dup {
			return nil, fmt.Errorf("parameter %s given twice", k)
		}
		vals[k] = n
	}
	return vals, nil
}
