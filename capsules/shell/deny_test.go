package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// Escape attempts against the deny list: each must be refused, whatever
// the spelling. It is a seatbelt (see docs/rationale/sandbox.md), so these are the
// spellings a model's slip or a pasted one-liner plausibly takes.
func TestDenyListRefusesEscapeAttempts(t *testing.T) {
	denied := []string{
		"rm -rf /",
		"rm -rf /*",
		"rm -fr / --no-preserve-root",
		"rm -rf //",
		"rm -rf /.",
		"rm -rf /./",
		"rm -rf /usr/../",
		"rm -rf /etc",
		"rm -rf /etc/",
		"rm -r /usr/local",
		"rm -rf /home/alice",
		`rm -rf "/"`,
		`rm -rf '/'`,
		`rm -rf \/`,
		`rm -rf "/"etc`,
		`r""m -rf /`,
		`\rm -rf /`,
		`"rm" -rf /`,
		`/bin/rm -rf /`,
		`rm -rf $'\x2f'`,
		`rm -rf $'\057'`,
		`rm -rf -- /`,
		`rm -rf ~`,
		`rm -rf ~/`,
		`rm -rf ~/.ssh`,
		`rm -rf ~root`,
		`rm -rf $HOME`,
		`rm -rf "$HOME"`,
		`rm -rf ${HOME}/`,
		`rm -rf $HOME/*`,
		`rm -rf $UNSET/`,
		`rm -rf "$UNSET"/*`,
		`rm -rf /{etc,tmp}`,
		`rm -rf /u*`,
		`rm -rf /*/*`,
		`rm -rf /US*/local`,
		`rm -rf ..`,
		`rm -rf ../..`,
		`rm -rf ../*`,
		`cd / && rm -rf *`,
		`cd /usr; rm -rf local`,
		`cd && rm -rf *`,
		`cd "$X" && rm -rf *`,
		`echo hi && rm -rf /`,
		`true || rm -rf /`,
		`ls; rm -rf /`,
		`ls | rm -rf /`,
		"ls\nrm -rf /",
		"ls \\\n; rm -rf /",
		`ls & rm -rf /`,
		`(rm -rf /)`,
		`{ rm -rf /; }`,
		`if true; then rm -rf /; fi`,
		`echo $(rm -rf /)`,
		"echo `rm -rf /`",
		`echo "$(rm -rf /)"`,
		"echo \"`rm -rf /`\"",
		`cat <(rm -rf /)`,
		`x=$(echo $(rm -rf /))`,
		`sudo rm -rf /`,
		`sudo -u root rm -rf /`,
		`sudo -- rm -rf /`,
		`doas rm -rf /`,
		`env rm -rf /`,
		`env -i FOO=1 rm -rf /`,
		`env -S "rm -rf /"`,
		`command rm -rf /`,
		`exec rm -rf /`,
		`nohup rm -rf / &`,
		`nice -n 10 rm -rf /`,
		`timeout 10 rm -rf /`,
		`timeout -s KILL 10s rm -rf /`,
		`time rm -rf /`,
		`FOO=bar rm -rf /`,
		`xargs rm -rf /`,
		`busybox rm -rf /`,
		`bash -c "rm -rf /"`,
		`sh -c 'rm -rf /'`,
		`bash -lc "rm -rf /"`,
		`/bin/sh -c "sudo rm -rf /"`,
		`bash -c "bash -c 'rm -rf /'"`,
		`eval "rm -rf /"`,
		`eval rm -rf /`,
		`echo "rm -rf /" | sh`,
		`printf 'rm -rf /' | bash`,
		`bash <<< "rm -rf /"`,
		"bash <<EOF\nrm -rf /\nEOF",
		"cat <<EOF\n$(rm -rf /)\nEOF",
		`su -c "rm -rf /"`,
		`watch rm -rf /`,
		`find / -delete`,
		`find /etc -name x -delete`,
		`find / -exec rm -rf {} +`,
		`find . -exec rm -rf / \;`,
		`X=rm; $X -rf /`,
		`rm -rf $(cat list)`,
		"rm -rf `cat list`",
		`mv /etc /tmp/x`,
		`chmod -R 777 /`,
		`chmod -R 000 /etc`,
		`chown -R nobody /home/alice`,
		`chmod --recursive 777 /usr`,
		`chgrp -R x ~`,
		`mkfs.ext4 /dev/sda1`,
		`mkfs -t ext4 /dev/sda`,
		`/sbin/mkfs.xfs /dev/nvme0n1`,
		`shutdown -h now`,
		`reboot`,
		`sudo poweroff`,
		`halt`,
		`init 0`,
		`systemctl reboot`,
		`dd if=/dev/zero of=/dev/sda`,
		`dd if=/dev/zero of=/dev/sda bs=1M`,
		`dd if=x "of=/dev/nvme0n1"`,
		`cat img > /dev/sda`,
		`cat img 1>/dev/sda`,
		`echo x &>/dev/sdb`,
		`wipefs -a /dev/sda`,
		`shred /dev/sda`,
		`cat img | sudo tee /dev/sda`,
		`cp disk.img /dev/nvme0n1`,
		`rm -rf /dev/sda`,
		`cd /etc && cd .. && rm -rf *`,
		`pushd / && rm -rf *`,
		`rm -rf ~/../..`,
		`rm -rf /home/*/`,
		"rm	-rf	/",
		`kill -9 -1`,
		`kill -- -1`,
		`kill 1`,
		`:(){ :|:& };:`,
		`:(){ :|: & };:`,
		`bomb() { bomb | bomb & }; bomb`,
		`function f { f | f & }; f`,
		`bash -c ':(){ :|:& };:'`,
	}
	for _, cmd := range denied {
		if why := denyReason(cmd); why == "" {
			t.Errorf("%q is allowed; want it refused", cmd)
		}
	}
}

// What a coding agent runs every day is not refused.
func TestDenyListAllowsOrdinaryCommands(t *testing.T) {
	allowed := []string{
		"ls -la",
		"ls -la /tmp",
		"go test ./...",
		"git status && git diff",
		"rm -rf build",
		"rm -rf ./node_modules",
		"rm -rf /tmp/astrid-build/out",
		"rm -rf /usr/local/lib/foo",
		"rm -rf /home/alice/project/build",
		"rm -rf ~/project/build",
		"rm -rf ../sibling/build",
		"rm *.o",
		"rm -f $(find . -name '*.o')",
		`grep -r "rm -rf /" .`,
		`echo "rm -rf /"`,
		`git commit -m "reboot the parser"`,
		"cat <<'EOF' > notes.txt\n$(rm -rf /) is a bad idea\nEOF",
		"chmod +x script.sh",
		"chmod -R u+w ./build",
		"chown -R me ./out",
		"dd if=/dev/zero of=disk.img bs=1M count=10",
		"echo x > /dev/null 2>&1",
		"make | tee /dev/stderr",
		"cp a.txt b.txt",
		"make 2>/dev/null",
		"find . -name '*.tmp' -delete",
		"kill -1 1234",
		"command -v reboot",
		"mkdir -p a/b && cd a/b && rm -rf *",
		"docker compose up -d",
		"python3 -c 'print(1)'",
		`bash -c "go build ./..."`,
	}
	for _, cmd := range allowed {
		if why := denyReason(cmd); why != "" {
			t.Errorf("%q is refused (%s); want it allowed", cmd, why)
		}
	}
}

func TestActionKey(t *testing.T) {
	for cmd, want := range map[string]string{
		"git push --force origin main": "git push",
		"docker compose up -d":         "docker compose up",
		"ls -la /tmp":                  "ls -la /tmp",
		"npm run build --prod":         "npm run build",
		"/usr/bin/git status":          "git status",
		"rm -rf /tmp/foo":              "rm -rf /tmp/foo",
		"go":                           "go",
	} {
		if got := actionOf(cmd); got != want {
			t.Errorf("actionOf(%q) = %q, want %q", cmd, got, want)
		}
	}
	long := actionOf("echo " + string(make([]byte, 0)) + stringOf('a', 1000))
	if len(long) > 256 {
		t.Errorf("action of a long command is %d bytes", len(long))
	}
}

func stringOf(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// The forms that got through the hand-written splitter (issue 28: 7 of
// 40 catastrophic commands ran) and their kin, read off the parsed program:
// parameter expansions with modifiers, xargs and the other wrappers,
// truncation by redirection, truncate, cp/mv/dd onto protected paths,
// nested command texts and quoting tricks. Each names what the refusal
// must say.
func TestDenyListRefusesParsedEscapes(t *testing.T) {
	cases := []struct{ cmd, why string }{
		// The seven that ran.
		{`rm -rf ${HOME:-/}`, "protected path"},
		{`rm -rf ${x:=/}`, "protected path /"},
		{`rm -rf ${v/#/\/}`, "protected path /"},
		{`echo / | xargs rm -rf`, "protected path /"},
		{`> /etc/passwd`, "redirects output onto the protected path /etc/passwd"},
		{`: > ~/.bashrc`, "redirects output onto the protected path ~/.bashrc"},
		{`truncate -s0 /etc/passwd`, "truncates the protected path /etc/passwd"},
		{`cp /dev/null /etc/passwd`, "runs cp onto the protected path /etc/passwd"},
		// Expansions with modifiers and variables set on the way.
		{`rm -rf ${HOME:+/}`, "protected path /"},
		{`rm -rf ${NOPE-/}`, "protected path /"},
		{`rm -rf ${NOPE:?}/`, "protected path /"},
		{`x=/etc; rm -rf $x`, "protected path /etc"},
		{`x=/etc/passwd; rm -rf ${x%/*}`, "protected path /etc"},
		{`x=/usr/lib/foo; rm -rf ${x%/*/*}`, "protected path /usr"},
		{`x=etc; rm -rf /${x}`, "protected path /etc"},
		{`x=ETC; rm -rf /${x,,}`, "protected path /etc"},
		{`x=/tmpfoo; rm -rf ${x/tmpfoo/etc}`, "protected path /etc"},
		{`x=/; y=$x; rm -rf "$y"`, "protected path /"},
		{`p=/; p+=etc; rm -rf $p`, "protected path /etc"},
		{`export D=/; rm -rf "$D"`, "protected path /"},
		{`: ${D:=/}; rm -rf $D`, "protected path /"},
		{`for d in build /; do rm -rf "$d"; done`, "protected path /"},
		{`if true; then D=/; fi; rm -rf $D`, "protected path /"},
		{`x=abc/etc; rm -rf /${x:4}`, "protected path /etc"},
		{`rm -rf /$(echo etc)`, "protected path /etc"},
		{`rm -rf "$(pwd)"`, "could not be resolved"},
		// Command substitution and backticks producing a command or path.
		{`$(echo rm) -rf /`, "protected path /"},
		{"`echo rm` -rf /", "protected path /"},
		{`rm -rf $(echo /)`, "protected path /"},
		{"rm -rf `echo /etc`", "protected path /etc"},
		{`echo $(sudo rm -rf /)`, "protected path /"},
		{`x=$(rm -rf ~)`, "protected path ~"},
		{`[[ -n $(rm -rf /) ]]`, "protected path /"},
		{`echo $(( $(rm -rf /) ))`, "protected path /"},
		{`echo ${x:-$(rm -rf /)}`, "protected path /"},
		{`diff <(rm -rf /) <(ls)`, "protected path /"},
		// eval, sh -c, bash -c and the like, parsed again.
		{`eval 'rm -rf /'`, "eval"},
		{`eval "$(echo rm -rf /)"`, "protected path /"},
		{`x="rm -rf /"; eval "$x"`, "protected path /"},
		{`bash -c 'rm -rf /'`, "bash -c"},
		{`sh -c "rm -rf ~"`, "sh -c"},
		{`bash -c "bash -c 'sh -c \"rm -rf /\"'"`, "protected path /"},
		{`dash -ec 'truncate -s 0 /etc/shadow'`, "protected path /etc/shadow"},
		{`zsh -c ': > /etc/hosts'`, "protected path /etc/hosts"},
		{`script -qc "rm -rf /" /dev/null`, "protected path /"},
		{`su root -c 'rm -rf /'`, "protected path /"},
		{`echo 'rm -rf /' | bash`, "protected path /"},
		{`printf 'rm -rf /\n' | sh`, "protected path /"},
		{`sh <<< 'rm -rf /'`, "protected path /"},
		{"bash <<'EOF'\nrm -rf /\nEOF", "protected path /"},
		{"cat <<EOF | sh\nrm -rf /\nEOF", "protected path /"},
		{`bash -c "$CMD"`, "could not be resolved"},
		{`eval "$CMD"`, "could not be resolved"},
		{`bash -c "rm -rf $DIR"`, "could not be resolved"},
		// Wrappers.
		{`env rm -rf /`, "protected path /"},
		{`env -i PATH=/bin rm -rf /`, "protected path /"},
		{`env -S'rm -rf /'`, "protected path /"},
		{`nice rm -rf /`, "protected path /"},
		{`nice -n 19 ionice -c3 rm -rf /`, "protected path /"},
		{`timeout 5 rm -rf /`, "protected path /"},
		{`timeout -k 1 5s bash -c 'rm -rf /'`, "protected path /"},
		{`nohup rm -rf / &`, "protected path /"},
		{`sudo rm -rf /`, "protected path /"},
		{`sudo -u root -- rm -rf /etc`, "protected path /etc"},
		{`sudo env nice timeout 1 nohup rm -rf /`, "protected path /"},
		{`command rm -rf /`, "protected path /"},
		{`command -p rm -rf /`, "protected path /"},
		{`builtin eval 'rm -rf /'`, "protected path /"},
		{`exec rm -rf /`, "protected path /"},
		{`exec -a x rm -rf /`, "protected path /"},
		{`busybox rm -rf /`, "protected path /"},
		{`stdbuf -oL rm -rf /`, "protected path /"},
		{`setsid rm -rf /`, "protected path /"},
		{`time rm -rf /`, "protected path /"},
		{`/usr/bin/env rm -rf /`, "protected path /"},
		{`xargs -a list rm -rf`, "could not be resolved"},
		{`ls | xargs rm -rf`, "could not be resolved"},
		{`echo / | xargs -I{} rm -rf {}`, "protected path /"},
		{`echo etc | xargs -I % rm -rf /%`, "protected path /etc"},
		{`printf '/\n' | xargs rm -rf`, "protected path /"},
		{`find / -maxdepth 0 | xargs rm -rf`, "protected path /"},
		{`echo / | xargs sudo rm -rf`, "protected path /"},
		// find.
		{`find / -delete`, "find -delete from the protected path /"},
		{`find ~ -name '*' -delete`, "protected path ~"},
		{`find / -exec rm -rf {} \;`, "protected path /"},
		{`find /etc -type f -exec truncate -s 0 {} +`, "protected path /etc"},
		{`find . -exec sh -c 'rm -rf /' \;`, "protected path /"},
		{`find "$D" -delete`, "could not be resolved"},
		// dd, cp, mv, tee, ln onto protected paths.
		{`dd if=/dev/zero of=/dev/sda`, "device /dev/sda"},
		{`dd if=/dev/zero of=/etc/passwd`, "runs dd onto the protected path /etc/passwd"},
		{`dd if=x of=$OUT`, "could not be resolved"},
		{`cp x /etc/passwd`, "protected path /etc/passwd"},
		{`cp passwd /etc`, "protected path /etc/passwd"},
		{`cp -f evil /etc/`, "protected path /etc/evil"},
		{`cp evil ~`, "protected path ~/evil"},
		{`cp bashrc ~/.bashrc`, "protected path ~/.bashrc"},
		{`cp .bashrc ~/`, "protected path ~/.bashrc"},
		{`cd / && rm -rf *`, "protected path /*"},
		{`cp -t /etc passwd`, "protected path /etc/passwd"},
		{`cp --target-directory=/etc passwd`, "protected path /etc/passwd"},
		{`install -m 644 x /etc/sudoers`, "protected path /etc/sudoers"},
		{`mv /etc /tmp/x`, "moves the protected path /etc"},
		{`mv x /etc/passwd`, "protected path /etc/passwd"},
		{`mv ~/.ssh /tmp/keys`, "moves the protected path ~/.ssh"},
		{`mv -t /tmp/old /usr`, "moves the protected path /usr"},
		{`ln -sf /dev/null /etc/passwd`, "protected path /etc/passwd"},
		{`rsync -a --delete empty/ /`, "protected path /"},
		{`echo x | tee /etc/passwd`, "protected path /etc/passwd"},
		{`echo x | sudo tee ~/.bashrc >/dev/null`, "protected path ~/.bashrc"},
		{`cp x "$DEST"`, "could not be resolved"},
		// Redirections onto protected paths.
		{`echo x > /etc/passwd`, "protected path /etc/passwd"},
		{`echo x >| /etc/passwd`, "protected path /etc/passwd"},
		{`echo x <> /etc/passwd`, "protected path /etc/passwd"},
		{`echo x &> /etc/passwd`, "protected path /etc/passwd"},
		{`echo x 2> /etc/passwd`, "protected path /etc/passwd"},
		{`echo x >& /etc/passwd`, "protected path /etc/passwd"},
		{`exec > /etc/passwd`, "protected path /etc/passwd"},
		{`true > ~/.profile`, "protected path ~/.profile"},
		{`echo > "$HOME/.bashrc"`, "protected path ~/.bashrc"},
		{`echo > ${HOME}/.ssh`, "protected path ~/.ssh"},
		{`: > /etc/{passwd,shadow}`, "protected path /etc/passwd"},
		{`cd /etc && : > passwd`, "protected path /etc/passwd"},
		{`echo > $'\x2fetc/passwd'`, "protected path /etc/passwd"},
		{`echo x > "$OUT"`, "could not be resolved"},
		{`echo x > "$TMPDIR/x"`, "protected path /x if its expansion is empty"},
		{`echo x >> /dev/sda`, "device /dev/sda"},
		// Brace expansion.
		{`rm -rf /{tmp,etc}`, "protected path /"},
		{`rm -rf /{x,{y,etc}}`, "protected path /"},
		{`rm -rf /e{t,x}c`, "protected path /etc"},
		{`rm -rf ~/{a,.ssh}`, "protected path ~/a"},
		{`rm -rf /{d..f}tc`, "protected path /"},
		// Quoting tricks.
		{`r''m -rf /`, "protected path /"},
		{`\rm -rf /`, "protected path /"},
		{`"r"m -rf /`, "protected path /"},
		{`$'\x72m' -rf /`, "protected path /"},
		{`$'\162\155' -rf $'\057'`, "protected path /"},
		{`$'r\u006d' -rf /`, "protected path /"},
		{`r\m -rf /`, "protected path /"},
		{"r\\\nm -rf /", "protected path /"},
		{`rm -rf "$(printf /)"`, "could not be resolved"},
		{`rm -rf ""/""`, "protected path /"},
		{`rm -rf /''etc`, "protected path /etc"},
		{`rm -rf "/e"'t'c`, "protected path /etc"},
		// A program name that cannot be resolved.
		{`$X -rf /`, "program name $X could not be resolved"},
		{`"$@"`, "program name"},
		{`$(cat cmd) /`, "program name"},
		{`${!ref} x`, "program name"},
		{`f() { "$@"; }; f rm -rf /`, "program name"},
		// Unresolved paths in dangerous positions.
		{`rm -rf "$DIR"`, "could not be resolved"},
		{`rm -rf $DIR/`, "protected path /"},
		{`rm -f ./$X`, "could not be resolved"},
		{`rm -rf ~/$X`, "protected path ~"},
		{`rm -rf $(git ls-files)`, "could not be resolved"},
		{`truncate -s 0 "$F"`, "could not be resolved"},
		{`read d; rm -rf "$d"`, "could not be resolved"},
		{`mapfile -t a < list; rm -rf "${a[0]}"`, "could not be resolved"},
		// Fork bombs, through the parser.
		{`:(){ :|:& };:`, "fork bomb"},
		{"bomb() {\n  bomb | bomb &\n}\nbomb", "fork bomb"},
		{`sh -c 'f(){ f|f& }; f'`, "fork bomb"},
		// Parse errors are decided, never guessed.
		{`echo 'unterminated`, "cannot be parsed as bash (1:6:"},
		{`rm -rf / )`, "cannot be parsed as bash (1:10:"},
		{"ls &&\n", "cannot be parsed as bash"},
		{`bash -c 'echo "'`, "given to bash -c cannot be parsed as bash (1:6:"},
	}
	for _, tc := range cases {
		why := denyReason(tc.cmd)
		if why == "" {
			t.Errorf("%q is allowed; want it refused (%s)", tc.cmd, tc.why)
			continue
		}
		if !strings.Contains(why, tc.why) {
			t.Errorf("%q is refused with %q; want it to say %q", tc.cmd, why, tc.why)
		}
	}
	t.Logf("%d escape forms refused", len(cases))
}

// Everyday commands stay allowed, variables in harmless positions
// included: the seatbelt must not get in the way of ordinary work.
func TestDenyListAllowsEverydayCommands(t *testing.T) {
	allowed := []string{
		"git status",
		"git log --oneline -5 && git diff --stat",
		`git commit -am "fix: rm -rf / guard"`,
		"git checkout -b feature/x && git push -u origin HEAD",
		"go test ./...",
		"go test -race -run 'TestX' ./capsules/shell/",
		"go vet ./... && staticcheck ./...",
		"go build -o bin/app ./cmd/app",
		"CGO_ENABLED=0 GOOS=linux go build ./...",
		"ls",
		"ls -la ~",
		"ls -la /etc",
		"cat /etc/passwd",
		"grep -rn 'TODO' --include='*.go' .",
		`grep -r "rm -rf /" docs/`,
		"echo hello > ./out.txt",
		"echo hello > out.txt",
		"echo hello >> notes.md",
		"echo x >> ~/.bash_history",
		`printf '%s\n' a b > build/list.txt`,
		"cat > ./config.json <<'EOF'\n{\"a\": 1}\nEOF",
		"cat <<EOF > gen.go\npackage main // $(date)\nEOF",
		"rm build/out.o",
		"rm -f ./tmp.txt",
		"rm -rf build dist ./node_modules",
		"rm -rf /tmp/astrid-test/cache",
		"rm -rf ~/project/build",
		"rm -rf build/$NAME",
		`rm -rf "build/${GOOS}_${GOARCH}"`,
		`for f in *.tmp; do rm -f "$f"; done`,
		`for d in a b c; do rm -rf "out/$d"; done`,
		`tmp=$(mktemp -d) && cp x "$tmp" && rm -rf "$tmp"`,
		`D=build; rm -rf "$D"`,
		"rm -f $(find . -name '*.o')",
		"find . -name '*.o' | xargs rm -f",
		"find . -name '*.pyc' -delete",
		"find . -type d -name __pycache__ -exec rm -rf {} +",
		"find src -name '*.go' | xargs gofmt -l",
		"git ls-files | xargs wc -l",
		"cp a.txt b.txt",
		"cp -r src/ /tmp/backup",
		"cp build/app /tmp/",
		"cp script.sh ~/bin/script.sh",
		"cp cfg ~/.config/",
		"mv old.txt new.txt",
		"mv build/app /usr/local/bin/app",
		"ln -s ../lib lib",
		"dd if=/dev/urandom of=./random.bin bs=1k count=4",
		"truncate -s 0 app.log",
		"echo x | tee out.log",
		"make 2>&1 | tee -a build.log",
		"make 2>/dev/null",
		"make >/dev/null 2>&1",
		"echo err >&2",
		"exec 3>&-",
		"echo $HOME",
		`echo "$PATH" | tr : '\n'`,
		"export PATH=$PATH:$HOME/go/bin",
		`go test $PKG -run "$TEST"`,
		"cd $GOPATH/src && ls",
		`cd "$(git rev-parse --show-toplevel)" && git status`,
		`"$GOROOT/bin/go" version`,
		"python3 -c 'import sys; print(sys.version)'",
		"node -e 'console.log(1)'",
		"npm test && npm run build",
		`docker run --rm -v "$PWD:/src" golang:1.24 go test ./...`,
		"curl -fsSL https://example.com/x.tar.gz | tar -xz -C ./vendor",
		"bash -c 'go test ./... && echo ok'",
		`sh -c "cd sub && make"`,
		`eval "echo hi"`,
		"timeout 60 go test ./...",
		"nice -n 10 make -j8",
		"sudo apt-get install -y ripgrep",
		"env GOFLAGS=-mod=mod go build ./...",
		"xargs -n1 echo < list.txt",
		"if [ -f go.mod ]; then go mod download; fi",
		`while read -r line; do echo "$line"; done < file.txt`,
		`case "$1" in a) echo a;; *) echo other;; esac`,
		"x=$((1 + 2)); echo $x",
		"echo {a,b,c}.txt",
		"mkdir -p out/{bin,lib}",
		"chmod -R u+w ./build",
		"kill %1",
		"jobs; wait",
		"wc -l < /etc/hosts",
		"diff <(sort a.txt) <(sort b.txt)",
		"sed -i 's/foo/bar/g' main.go",
		"tar -czf /tmp/out.tar.gz ./dist",
		"rg -n 'deny' capsules/",
	}
	for _, cmd := range allowed {
		if why := denyReason(cmd); why != "" {
			t.Errorf("%q is refused (%s); want it allowed", cmd, why)
		}
	}
	t.Logf("%d everyday commands allowed", len(allowed))
}

// A command line the parser cannot read is refused with the parser's
// line:col and message.
func TestDenyListDecidesParseErrors(t *testing.T) {
	for _, cmd := range []string{"echo 'a", "((((", "`", "$(", "echo $((1+", "case", "if true; then", "a |", "ls )", "cat <(", "${", "f() {"} {
		_, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
		if perr == nil {
			t.Errorf("%q parses; the test expected a parse error", cmd)
			continue
		}
		if why := denyReason(cmd); !strings.Contains(why, perr.Error()) {
			t.Errorf("%q is decided as %q; want the parser's message %q", cmd, why, perr.Error())
		}
	}
}

// The checker is fed whatever a model writes: it must never panic and
// must decide every input (a command line that does not parse is
// refused), the same way each time.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		"rm -rf /", "echo $(a `b` $'\\x2f') <<E\nx\nE", "((((", "$((1+2))", "'unterminated", `"$(`, "{a,{b,c}}",
		`rm -rf ${HOME:-/}`, `rm -rf ${v/#/\/}`, `echo / | xargs rm -rf`, `: > ~/.bashrc`, `x=/; bash -c "rm -rf $x"`,
		`find / -exec sh -c 'eval "$0"' {} \;`, `f(){ f|f& };f`, `a=${b%%/*}; cp x "${a^^}"`, `echo {1..99999}`,
		`x=${y/#*/\/}; rm -rf ${x:1:2}`, "cat <<'E' | bash\nrm -rf /\nE",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		why := denyReason(s)
		if strings.HasPrefix(why, panicPrefix) {
			t.Fatalf("%q: %s", s, why)
		}
		if again := denyReason(s); again != why {
			t.Fatalf("%q is decided as %q, then as %q", s, why, again)
		}
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), ""); err != nil && why == "" {
			t.Fatalf("%q does not parse (%v), yet it is allowed", s, err)
		}
		_ = actionOf(s)
	})
}
