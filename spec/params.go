package spec

import (
	"fmt"
	"maps"
	"slices"
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
// not given keeps v's value: its Values', or the default), named
// BASE@p=v,... with every parameter in Params' order so that LookupVariant
// finds it again (history headers, explore replay). A variant without
// parameters, an unknown name or a value out of range is an error.
func (v Variant) With(vals map[string]int) (Variant, error) {
	if len(v.Params) == 0 || v.At == nil {
		return Variant{}, fmt.Errorf("variant %s has no parameters", v.Name)
	}
	base, _, _ := strings.Cut(v.Name, "@")
	at := make([]int, len(v.Params))
	all := make(map[string]int, len(v.Params))
	used := 0
	for i, p := range v.Params {
		x, ok := vals[p.Name]
		switch {
		case ok:
			used++
		case v.Values != nil:
			x = v.Values[p.Name]
		default:
			x = p.Default
		}
		if x < p.Min || x > p.Max {
			return Variant{}, fmt.Errorf("variant %s: %s=%d out of range [%d, %d]", base, p.Name, x, p.Min, p.Max)
		}
		at[i], all[p.Name] = x, x
	}
	if used != len(vals) {
		var unknown []string
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			if _, ok := v.Param(k); !ok {
				unknown = append(unknown, k)
			}
		}
		return Variant{}, fmt.Errorf("variant %s: unknown parameter %s (its parameters: %s)", base, strings.Join(unknown, ", "), strings.Join(v.ParamNames(), ", "))
	}
	w := v.At(at)
	w.Name, w.Params, w.At, w.Values = base, v.Params, v.At, all
	w.Name = w.NameWithout() // BASE@ every value
	return w, nil
}

// NameWithout is v's name less the values of the parameters called drop:
// BASE@p=v,... over the values v has (Values), in Params' order, or BASE
// alone when none is left. With no drop it is the name With gives.
func (v Variant) NameWithout(drop ...string) string {
	base, _, _ := strings.Cut(v.Name, "@")
	var parts []string
	for _, p := range v.Params {
		if x, set := v.Values[p.Name]; set && !slices.Contains(drop, p.Name) {
			parts = append(parts, p.Name+"="+strconv.Itoa(x))
		}
	}
	if len(parts) == 0 {
		return base
	}
	return base + "@" + strings.Join(parts, ",")
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

// ParseName splits a variant's name NAME@p=v,q=w into NAME and the
// parameter values it gives (nil for a name without @); NAME even when
// the values cannot be read.
func ParseName(name string) (base string, vals map[string]int, err error) {
	base, list, ok := strings.Cut(name, "@")
	if !ok {
		return name, nil, nil
	}
	vals = map[string]int{}
	for _, kv := range strings.Split(list, ",") {
		k, x, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(x)
		if !ok || k == "" || err != nil {
			return base, nil, fmt.Errorf("parameter %q: want NAME=INTEGER", kv)
		}
		if _, dup := vals[k]; dup {
			return base, nil, fmt.Errorf("parameter %s given twice", k)
		}
		vals[k] = n
	}
	return base, vals, nil
}
