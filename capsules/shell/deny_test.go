package shell

import "testing"

// Escape attempts against the deny list: each must be refused, whatever
// the spelling. It is a seatbelt (see RATIONALE), so these are the
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

// The parser is fed whatever a model writes: it must end on any input.
func FuzzDenyReason(f *testing.F) {
	for _, s := range []string{"rm -rf /", "echo $(a `b` $'\\x2f') <<E\nx\nE", "((((", "$((1+2))", "'unterminated", `"$(`, "{a,{b,c}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = denyReason(s)
		_ = actionOf(s)
	})
}
