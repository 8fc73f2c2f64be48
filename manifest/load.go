package manifest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/astrid-go/astrid/internal/capsulefile"
)

// FileName is the manifest's file name inside a capsule directory.
const FileName = "Capsule.toml"

// MaxFileBytes bounds a manifest's size; a larger one is refused before it
// is read (a real one is a few KiB).
const MaxFileBytes = 1 << 20

// Load reads, parses and validates a capsule's manifest. path is a capsule
// directory or a Capsule.toml file; files the manifest names are looked up
// relative to the capsule directory. The manifest is nil only when the file
// cannot be read or is not TOML; otherwise it is returned even with errors,
// for reports, and must not be run unless Diagnostics.Err is nil.
func Load(path string) (*Manifest, Diagnostics) {
	file := path
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		file = filepath.Join(path, FileName)
	}
	data, err := capsulefile.Read(filepath.Dir(file), filepath.Base(file), MaxFileBytes)
	if err != nil {
		msg := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			msg = "no manifest here: " + file + " does not exist"
		}
		return nil, Diagnostics{{Severity: Error, File: file, Message: msg}}
	}
	dir := filepath.Dir(file)
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if filepath.Base(file) != FileName {
		// A loose manifest (not a capsule directory's Capsule.toml) is
		// checked on its own: the files it names are not looked for.
		m, diags := parse(data, file, dir, false)
		diags = append(Diagnostics{{Severity: Note, File: file, Message: "not a capsule directory's " + FileName + ": the files it names were not looked for"}}, diags...)
		return m, diags
	}
	return Parse(data, file, dir)
}

// Parse validates manifest text. filename is what diagnostics cite; dir is
// the capsule directory for the files the manifest names, or "" to leave
// them unchecked (embedded manifests of built-in capsules).
func Parse(data []byte, filename, dir string) (*Manifest, Diagnostics) {
	return parse(data, filename, dir, dir != "")
}

func parse(data []byte, filename, dir string, statFiles bool) (*Manifest, Diagnostics) {
	c := &checker{file: filename}
	root, err := parseTree(data)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			c.errorf(se.at, "", "not valid TOML: %s", se.msg)
		} else {
			c.errorf(pos{1, 1}, "", "not valid TOML: %v", err)
		}
		return nil, c.diags
	}
	m := &Manifest{Dir: dir, File: filename}
	top := c.table(root, "")
	c.readPackage(top, m)
	c.readComponents(top, m)
	c.readInterfaces(top, m)
	c.readTopics(top, m)
	c.readCapabilities(top, m)
	c.readEnv(top, m)
	c.readCommands(top, m)
	c.readMCPServers(top, m)
	c.readSkills(top, m)
	c.readUplinks(top, m)
	c.readContextFiles(top, m)
	c.readTools(top, m)
	c.readLegacySections(top)
	top.rest(nil)
	c.crossCheck(top, m)
	if statFiles {
		c.checkFiles(m)
	}
	c.sort()
	return m, c.diags
}
