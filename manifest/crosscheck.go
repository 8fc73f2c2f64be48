package manifest

// crossCheck applies the rules that span sections.
func (c *checker) crossCheck(top *table, m *Manifest) {
	if m.Capabilities.Uplink && len(m.Imports) > 0 {
		at := pos{1, 1}
		if v := top.v.fields["imports"]; v != nil {
			at = v.keyAt
		}
		c.errorf(at, "imports", "[imports] is not allowed on an uplink capsule (capabilities.uplink = true): uplinks load before every other capsule and cannot depend on them; remove the imports or the uplink flag")
	}
	if len(m.Uplinks) > 0 && !m.Capabilities.Uplink {
		at := pos{1, 1}
		if v := top.v.fields["uplink"]; v != nil {
			at = v.keyAt
		}
		c.warnf(at, "uplink", "[[uplink]] declares a frontend, but capabilities.uplink is false: the capsule cannot publish or subscribe for the people it would serve; set uplink = true or remove [[uplink]]")
	}
	c.checkToolPlumbing(top, m)
	c.checkElicitAnswers(top, m)
	c.checkEditorBuffers(top, m)
}
