import { DEFAULT_AUTONOMOUS_LIMITS as LIMITS } from "../autonomous/limits.js";
import { ExitCode } from "../errors.js";

export const HELP = `prime-agent: a coding agent whose one tool is a persistent IPython kernel.

Usage:
  prime-agent [options]                 the terminal UI (a line chat when not on a terminal)
  prime-agent -p "request" [options]    run one request and exit
  prime-agent setup                     create the kernel's Python environment
  prime-agent kernelspec install [--name <name>]   a Jupyter kernelspec of prime-agent's kernel (run on the server's machine)
  prime-agent doctor                    check Python, the kernel, providers and settings
  prime-agent sessions [--all] [--json] list sessions of this directory (--all: every directory)
  prime-agent sessions <id|path>        show a session's active branch with entry ids
  prime-agent package install <path|npm:name[@version]> [--local]   add an extension package
  prime-agent package list [--local]    list extension packages
  prime-agent package remove <name|path> [--local]                  remove an extension package
  prime-agent skill list|show <name>    list skills, or show one's SKILL.md
  prime-agent skill install <path|npm:name[@version]> [--local] [--force]
                                        add skills (--local: .prime/skills; --force: replace one of the same name)
  prime-agent skill remove <name> [--local]                         remove an installed skill
  prime-agent agents [--json]           background agents: running, idle, saved or failed; directory, last activity
  prime-agent attach <agent> [--mode json]   back to a background agent: the terminal UI, or the line
                                        chat (--mode json: its events as JSON lines, stdin lines as prompts)
  prime-agent status                    whether the daemon runs, and its agents
  prime-agent shutdown [<agent>] [--force]   stop one agent (its session is saved), or all and the daemon
  prime-agent schedule "<when>" "<prompt>" [--agent <agent>] [--steer]
                                        when: "in 30m", "every 10m", "at <ISO time>" or a cron expression;
                                        also schedule list, schedule remove <id>

Options:
  -p, --print <text>       run this request in the current directory, print the answer, exit
  -m, --model <p/id>       model as provider/id, e.g. anthropic/claude-sonnet-4-5, ollama/qwen2.5-coder:14b
      --mode text|json     json: print every event as one JSON line (for scripts)
  -c, --continue           continue the newest session of this directory
  -r, --resume <id|path>   resume a session by id, id prefix or file path
      --fork <id|path>     continue in a new session file holding that session's branch
      --at <entry-id>      with --resume, --continue or --fork: continue from this entry (a new branch)
      --tools <list>       tools to enable; the only tool is "ipython"
      --thinking <level>   off, minimal, low, medium, high, xhigh
  -e, --extension <path>   load this extension (a .js/.mjs module or a package folder) for this run
      --local              with package: the project's .prime/agent/settings.json, not the agent home's
      --trust-project      run this project's code without asking: .prime/mcp.json servers,
                           .prime/skills packages, .prime/agent extensions and packages
      --kernel-url <url>   run the kernels on this Jupyter Server or Enterprise Gateway (token from
                           JUPYTER_TOKEN; also PRIME_AGENT_KERNEL_URL, "kernel" in settings.json);
                           "local" runs them on this machine
      --goal <objective>   set a goal: the host keeps the model working until it audits the objective
                           and calls goal.complete(); budget: --goal-tokens N (input + output),
                           --goal-turns N, --goal-minutes N
      --autonomous         with -p: when the model would stop, run the quality gates; a failing gate
                           continues the run with its output. Limits (defaults): --max-continuations ${LIMITS.continuations},
                           --max-turns ${LIMITS.turns}, --max-tokens ${LIMITS.tokens}, --max-minutes ${LIMITS.timeMs / 60_000} (or "autonomous" in
                           settings.json). A report ends the run: the gates passed (exit 0), which
                           limit was reached (exit ${ExitCode.limitReached}, never success), or which gate cannot run
                           its command (exit ${ExitCode.usage}: fix the gate)
      --gate <command>     a quality gate, a shell command (repeatable; replaces "autonomous.gates")
  -h, --help               show this help
  -v, --version            show the version

Keys come from the usual environment variables (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, ...)
or from auth.json in the agent home. The agent home is $PRIME_AGENT_DIR (default ~/.prime/agent):
settings.json, auth.json, models.json (local OpenAI-compatible servers), sessions/, extensions/.
Extensions also load from <project>/.prime/agent/extensions/. In a prompt, /compact [instructions]
summarises the older conversation (the kernel keeps its state); /goal shows the goal, /goal <objective>
sets one (/goal pause, resume, clear); extensions add more /commands.
MCP servers (mcp.json in the agent home, .prime/mcp.json in the project) are Python modules in the
kernel (import mcp_servers.NAME); /mcp lists them. Skills live in skills/ and .prime/skills/;
/skill create <name> drafts one from the session. /refine [instructions] distils the session into the
continual harness (/refine list, /refine rollback <id>); /harness lists its entries.
Sessions run in a background worker of a per-user daemon: /exit in the chat (or a closed terminal)
detaches and the work goes on; a -p or JSON run's worker stops when the run ends, or 30 s after its
client goes. /heartbeat <interval> [text] and /schedule work there. PRIME_AGENT_IN_PROCESS=1 runs
in this process instead.

Exit codes: ${ExitCode.ok} done, ${ExitCode.modelError} model error, ${ExitCode.usage} bad usage or config, ${ExitCode.missingCredentials} no API key, ${ExitCode.kernel} kernel not ready, ${ExitCode.limitReached} a limit stopped the work
(an autonomous limit or a goal's budget), ${ExitCode.disk} the disk refused a write (full, quota, read-only),
${ExitCode.interrupted} interrupted.

Code a project brings (.prime/mcp.json servers, .prime/skills packages, .prime/agent/extensions, the
packages of .prime/agent/settings.json) runs only once approved: the terminal UI asks once per project
and again when a file changes (approvals: trusted-projects.json in the agent home); -p and JSON runs use
only what was approved, or everything with --trust-project. AGENTS.md and SKILL.md texts are read as text.

Not a sandbox: code written by the model runs with your permissions.
`;
