#!/usr/bin/env bash
# install.sh - install svcmaps on one Debian/Ubuntu machine.
#
# Usage: ./install.sh [--prefix DIR] [--data DIR] [--user NAME] [--port N]
#                     [--host H] [--start] [--no-systemd] [--unit-file PATH]
#                     [--print-nginx]
#                     [-h|--help]
#
# Steps:
#   1. check Node.js (20 or later), npm and the build tools (python3, make, g++)
#   2. create the system user the service runs as (root only)
#   3. `npm ci --include=dev --no-audit --no-fund` in the prefix; this also
#      builds dist/ through the package's `prepare` script. In an offline
#      bundle (made by `npm run bundle`, marked by .svcmaps-bundle.json) the
#      dependencies and dist/ are already there: npm is not run and no network
#      is needed, but the bundle must match this machine's platform and Node.js
#      major version.
#   4. verify that `node bin/svcmaps --help` runs, the native modules load and
#      uWebSockets.js has a binary for this Node ABI (its fallback cannot serve)
#   5. create the data directory (mode 0700, owned by the service user), keep
#      the tile-token secret in it at mode 0600 and remove a stale svcmaps.pid
#      (a data directory carried from another machine)
#   6. write /etc/systemd/system/svcmaps.service (root + running systemd only;
#      otherwise the unit is printed; --unit-file writes it elsewhere) and run
#      `systemctl daemon-reload`
#   7. with --start: `systemctl enable --now svcmaps`
#   8. print the next steps (admin key, OSM import, start, health check)
#
# Re-running is safe: an existing user, data directory or identical unit is
# left alone; the unit is rewritten only when its content changed.
#
# Without root the installer skips the user and the systemd unit, uses a data
# directory the current user can create (default: ~/.local/share/svcmaps) and
# says so.
#
# Environment:
#   SVCMAPS_INSTALL_SKIP_NPM=1   skip the npm step (and only warn when the build
#                                or the build tools are missing). Exercises the
#                                option parsing, user, data directory and unit
#                                steps without a multi-minute npm install.

set -euo pipefail
umask 022

readonly UNIT_NAME=svcmaps
readonly SYSTEM_UNIT_FILE=/etc/systemd/system/${UNIT_NAME}.service
readonly MIN_NODE_MAJOR=20
# Written by scripts/bundle.mjs into an offline bundle: platform, arch and Node ABI it was built for.
readonly BUNDLE_MARKER=.svcmaps-bundle.json

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
SCRIPT_NAME=$(basename -- "${BASH_SOURCE[0]}")

# ---------------------------------------------------------------- output ----

say()  { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die()  { printf 'ERROR: %s\n' "$*" >&2; exit 1; }
usage_error() {
  printf 'ERROR: %s\n' "$*" >&2
  printf "Run '%s --help' for the options.\n" "$0" >&2
  exit 2
}

usage() {
  cat <<EOF
Usage: $0 [options]

Installs svcmaps on this machine: checks Node.js (${MIN_NODE_MAJOR} or later) and the
build tools, installs the npm dependencies with npm ci (which builds dist/),
creates the service user and the data directory, and writes a systemd unit.
Inside an offline bundle (npm run bundle) the dependencies are already there:
npm is not run and no network is needed.

Options:
  --prefix DIR   where the svcmaps app lives (default: the directory holding
                 this script, i.e. install in place: $SCRIPT_DIR)
  --data DIR     data directory (default: /var/lib/svcmaps as root,
                 \${XDG_DATA_HOME:-~/.local/share}/svcmaps otherwise)
  --user NAME    system user the service runs as (default: svcmaps; created
                 when missing and running as root)
  --port N       TCP port to listen on (default: 8080)
  --host H       address to listen on (default: 127.0.0.1)
  --start        enable and start the systemd service (without it the unit is
                 written but not started)
  --no-systemd   do not write a systemd unit
  --unit-file PATH
                 write the unit to PATH (a .service file) instead of
                 $SYSTEM_UNIT_FILE; no daemon-reload, no start,
                 works without root (e.g. for systemd-analyze verify)
  --print-nginx  print the nginx site for this --host/--port (from
                 deploy/nginx.conf) and exit without installing; put it in
                 /etc/nginx/sites-available/svcmaps and link it from
                 sites-enabled
  -h, --help     show this help

Options also accept the --opt=value form.

Environment:
  SVCMAPS_INSTALL_SKIP_NPM=1   skip the npm install/build step

Run as root for a system-wide install (service user + systemd unit). Without
root the user and unit steps are skipped and the unit is only printed.
EOF
}

# --------------------------------------------------------------- options ----

PREFIX=$SCRIPT_DIR
DATA=''
SVC_USER=''
USER_GIVEN=0
PORT=8080
HOST=127.0.0.1
START=0
WANT_SYSTEMD=1
PRINT_NGINX=0
UNIT_FILE_GIVEN=''

while [[ $# -gt 0 ]]; do
  opt=$1
  val=''
  inline=0
  case $opt in
    --*=*) val=${opt#*=}; opt=${opt%%=*}; inline=1 ;;
  esac
  case $opt in
    --prefix|--data|--user|--port|--host|--unit-file)
      if [[ $inline -eq 0 ]]; then
        if [[ $# -lt 2 || $2 == -* ]]; then usage_error "$opt needs a value"; fi
        val=$2
        shift
      fi
      [[ -n $val ]] || usage_error "$opt needs a non-empty value"
      case $opt in
        --prefix) PREFIX=$val ;;
        --data)   DATA=$val ;;
        --user)   SVC_USER=$val; USER_GIVEN=1 ;;
        --port)   PORT=$val ;;
        --host)   HOST=$val ;;
        --unit-file) UNIT_FILE_GIVEN=$val ;;
      esac
      ;;
    --start|--no-systemd|--print-nginx|-h|--help)
      [[ $inline -eq 0 ]] || usage_error "$opt takes no value"
      case $opt in
        --start)      START=1 ;;
        --no-systemd) WANT_SYSTEMD=0 ;;
        --print-nginx) PRINT_NGINX=1 ;;
        -h|--help)    usage; exit 0 ;;
      esac
      ;;
    *) usage_error "unknown option: $1" ;;
  esac
  shift
done

case ${SVCMAPS_INSTALL_SKIP_NPM:-} in
  ''|0|false|no) SKIP_NPM=0 ;;
  *)             SKIP_NPM=1 ;;
esac
# svcmaps reads SVCMAPS_* variables as configuration; keep this one away from it.
unset SVCMAPS_INSTALL_SKIP_NPM

IS_ROOT=0
[[ $EUID -eq 0 ]] && IS_ROOT=1
CURRENT_USER=$(id -un)

# ------------------------------------------------------------ validation ----

# --print-nginx: the shipped site, pointed at this appliance's address, and nothing else.
if [[ $PRINT_NGINX -eq 1 ]]; then
  [[ $PORT =~ ^[0-9]+$ && $PORT -ge 1 && $PORT -le 65535 ]] || usage_error "--port must be 1-65535 (got '$PORT')"
  [[ $HOST =~ ^[A-Za-z0-9.:-]+$ ]] || usage_error "--host '$HOST' is not an address"
  upstream=$HOST
  [[ $upstream == 0.0.0.0 || $upstream == :: ]] && upstream=127.0.0.1 # listening everywhere: nginx reaches it locally
  [[ -f $SCRIPT_DIR/deploy/nginx.conf ]] || die "deploy/nginx.conf is missing beside $SCRIPT_NAME"
  sed "s/server 127\.0\.0\.1:8080;/server $upstream:$PORT;/" "$SCRIPT_DIR/deploy/nginx.conf"
  exit 0
fi

# Paths end up in a systemd unit and in printed shell commands: keep them plain.
check_path_chars() { # name value
  [[ $2 =~ ^/[A-Za-z0-9._/+@-]*$ ]] ||
    die "$1 '$2' contains characters this installer does not support (allowed: letters, digits, . _ / + @ -)"
}

abs_path() { realpath -m -- "$1"; }

# Port.
if ! [[ $PORT =~ ^[0-9]{1,5}$ ]] || (( 10#$PORT < 1 || 10#$PORT > 65535 )); then
  usage_error "--port must be a number from 1 to 65535 (got '$PORT')"
fi
PORT=$((10#$PORT))

# Host: an IPv4/IPv6 address or a host name; [::1] is accepted and unwrapped.
if [[ $HOST == \[*\] ]]; then HOST=${HOST:1:${#HOST}-2}; fi
[[ $HOST =~ ^[A-Za-z0-9._:-]+$ ]] || usage_error "--host must be an address or host name (got '$HOST')"

# Prefix.
PREFIX=$(abs_path "$PREFIX")
check_path_chars --prefix "$PREFIX"
[[ -d $PREFIX ]] || die "--prefix $PREFIX is not a directory"
[[ -f $PREFIX/package.json && -f $PREFIX/bin/svcmaps ]] ||
  die "$PREFIX does not look like the svcmaps app (expected package.json and bin/svcmaps there); pass --prefix"
grep -Eq '"name"[[:space:]]*:[[:space:]]*"svcmaps"' "$PREFIX/package.json" ||
  die "$PREFIX/package.json is not the svcmaps package; pass the right --prefix"

# An offline bundle (npm run bundle) carries node_modules and dist/: npm is not run.
BUNDLED=0
if [[ -f $PREFIX/$BUNDLE_MARKER ]]; then
  [[ -d $PREFIX/node_modules && -f $PREFIX/dist/cli/main.js ]] ||
    die "$PREFIX/$BUNDLE_MARKER says this is an offline bundle, but node_modules/ or dist/ is missing: extract the whole tarball again"
  BUNDLED=1
fi

# Service user.
if [[ -z $SVC_USER ]]; then
  if [[ $IS_ROOT -eq 1 ]]; then SVC_USER=svcmaps; else SVC_USER=$CURRENT_USER; fi
fi
[[ $SVC_USER =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] ||
  usage_error "--user must be a valid user name (lower case letters, digits, _ and -; got '$SVC_USER')"

# Data directory.
if [[ -z $DATA ]]; then
  if [[ $IS_ROOT -eq 1 ]]; then
    DATA=/var/lib/svcmaps
  else
    [[ -n ${HOME:-} ]] || die "HOME is not set; pass --data DIR"
    DATA=${XDG_DATA_HOME:-$HOME/.local/share}/svcmaps
    DATA_NOTE="not running as root, so the data directory defaults to $DATA (pass --data to choose another)"
  fi
fi
DATA=$(abs_path "$DATA")
check_path_chars --data "$DATA"
case $DATA in
  /|/bin|/boot|/dev|/etc|/home|/lib|/lib32|/lib64|/libx32|/media|/mnt|/opt|/proc|/root|/run|/sbin|/srv|/sys|/tmp|\
  /usr|/usr/local|/usr/lib|/usr/share|/var|/var/lib|/var/tmp|/var/log|/var/cache|/var/spool|\
  /boot/*|/dev/*|/etc/*|/proc/*|/sys/*|/run/*)
    die "refusing --data $DATA: pick a dedicated directory such as /var/lib/svcmaps (it gets mode 0700 and is owned by the service user)" ;;
esac
if [[ -n ${HOME:-} && $DATA == "$(abs_path "$HOME")" ]]; then
  die "refusing --data $DATA: that is the home directory; pick a dedicated directory"
fi
if [[ $DATA == "$PREFIX" || $PREFIX == "$DATA"/* ]]; then
  die "refusing --data $DATA: it must not be the app directory or contain it ($PREFIX)"
fi
# Without root, find out now (not after a long npm install) whether the data
# directory can be created.
if [[ $IS_ROOT -ne 1 && ! -d $DATA ]]; then
  parent=$(dirname -- "$DATA")
  while [[ ! -e $parent ]]; do parent=$(dirname -- "$parent"); done
  [[ -d $parent && -w $parent ]] ||
    die "cannot create $DATA as $CURRENT_USER ($parent is not writable); pass --data with a directory you can create, or run as root"
fi

# What happens with the systemd unit: none | install | print | file (--unit-file).
UNIT_MODE=none
UNIT_WHY=''
UNIT_FILE=$SYSTEM_UNIT_FILE
if [[ -n $UNIT_FILE_GIVEN ]]; then
  [[ $WANT_SYSTEMD -eq 1 ]] || usage_error "--unit-file and --no-systemd exclude each other"
  UNIT_FILE=$(abs_path "$UNIT_FILE_GIVEN")
  [[ $UNIT_FILE == *.service ]] || usage_error "--unit-file must name a .service file (got '$UNIT_FILE')"
  [[ -d $(dirname -- "$UNIT_FILE") ]] || usage_error "--unit-file: $(dirname -- "$UNIT_FILE") is not a directory"
  UNIT_MODE=file
elif [[ $WANT_SYSTEMD -eq 1 ]]; then
  if [[ $IS_ROOT -ne 1 ]]; then
    UNIT_MODE=print
    UNIT_WHY="not running as root, so the unit is not installed"
  elif [[ ! -d /run/systemd/system ]]; then
    UNIT_MODE=print
    UNIT_WHY="systemd is not running on this machine (/run/systemd/system does not exist), so the unit is not installed"
  elif ! command -v systemctl >/dev/null 2>&1; then
    UNIT_MODE=print
    UNIT_WHY="systemctl was not found, so the unit is not installed"
  else
    UNIT_MODE=install
  fi
fi

# PrivateTmp=yes gives the service its own /tmp: a data directory under the
# host's /tmp would not exist inside it and the service could not start.
DATA_IN_TMP=0
case $DATA in /tmp/*|/var/tmp/*) DATA_IN_TMP=1 ;; esac
if [[ $UNIT_MODE == install && $DATA_IN_TMP -eq 1 ]]; then
  die "--data $DATA is under a temporary directory, which the service cannot use (PrivateTmp=yes); pick a persistent directory such as /var/lib/svcmaps, or pass --no-systemd"
fi

if [[ $START -eq 1 && $UNIT_MODE != install ]]; then
  warn "--start ignored: the systemd unit is not being installed${UNIT_WHY:+ ($UNIT_WHY)}"
  START=0
fi

# ------------------------------------------------------------- preflight ----

say "svcmaps installer"
note "app (prefix):   $PREFIX"
note "data:           $DATA"
note "service user:   $SVC_USER"
note "listen:         $HOST:$PORT"
case $UNIT_MODE in
  install) note "systemd unit:   $UNIT_FILE$([[ $START -eq 1 ]] && printf ' (enable and start)' || printf ' (written, not started)')" ;;
  file)    note "systemd unit:   written to $UNIT_FILE only (--unit-file: not installed, no daemon-reload)" ;;
  print)   note "systemd unit:   printed only ($UNIT_WHY)" ;;
  none)    note "systemd unit:   skipped (--no-systemd)" ;;
esac
if [[ $BUNDLED -eq 1 ]]; then
  note "npm step:       skipped (offline bundle: node_modules and dist/ are included)"
elif [[ $SKIP_NPM -eq 1 ]]; then
  note "npm step:       skipped (SVCMAPS_INSTALL_SKIP_NPM)"
fi
if [[ $IS_ROOT -ne 1 ]]; then
  note "running as $CURRENT_USER (not root): no service user is created and no systemd unit is installed"
  [[ -n ${DATA_NOTE:-} ]] && note "$DATA_NOTE"
  if [[ $USER_GIVEN -eq 1 && $SVC_USER != "$CURRENT_USER" ]]; then
    warn "not root: cannot create user '$SVC_USER' or give it the data directory; $DATA will be owned by $CURRENT_USER"
  fi
fi
if [[ $SVC_USER == root ]]; then
  warn "the service will run as root; a dedicated unprivileged user (the default, svcmaps) is safer"
fi
if (( PORT < 1024 )) && [[ $SVC_USER != root ]]; then
  if [[ $UNIT_MODE != none ]]; then
    note "port $PORT is privileged: the unit grants CAP_NET_BIND_SERVICE so $SVC_USER can bind it"
  fi
  if [[ $UNIT_MODE != install ]]; then
    warn "port $PORT is privileged (< 1024): running the server directly as $SVC_USER will fail to bind it"
  fi
fi

say "Checking Node.js"
NODE_HELP="Install Node.js 20 (the version svcmaps is tested on; later majors pass this check but need a uWebSockets.js binary for their ABI), e.g. from NodeSource (https://github.com/nodesource/distributions: setup_20.x, then apt-get install -y nodejs) or an official build from https://nodejs.org/ (the distribution's own nodejs package may be another major version: apt-cache policy nodejs)."
NODE_BIN=$(command -v node 2>/dev/null) || die "node was not found on PATH. $NODE_HELP"
NODE_BIN=$(realpath -s -- "$NODE_BIN")
NODE_VERSION=$("$NODE_BIN" -p process.versions.node 2>/dev/null) ||
  die "could not run $NODE_BIN -p process.versions.node. $NODE_HELP"
NODE_MAJOR=${NODE_VERSION%%.*}
if ! [[ $NODE_MAJOR =~ ^[0-9]+$ ]] || (( NODE_MAJOR < MIN_NODE_MAJOR )); then
  die "svcmaps needs Node.js ${MIN_NODE_MAJOR} or later, found v$NODE_VERSION ($NODE_BIN). $NODE_HELP"
fi
check_path_chars "node path" "$NODE_BIN"
NODE_PLATFORM=$("$NODE_BIN" -p '`${process.platform}-${process.arch}`')
NODE_ABI=$("$NODE_BIN" -p process.versions.modules)
note "node v$NODE_VERSION ($NODE_BIN, $NODE_PLATFORM, module ABI $NODE_ABI)"

if [[ $BUNDLED -eq 1 ]]; then
  # The bundle's native modules (better-sqlite3, @napi-rs/canvas, uWebSockets.js) were built for one platform and
  # Node ABI; nothing can rebuild them without the network.
  bundle_for=$("$NODE_BIN" -e '
    const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(`${m.platform}-${m.arch} ${m.node_abi} ${m.node} ${m.version}`);' "$PREFIX/$BUNDLE_MARKER") ||
    die "$PREFIX/$BUNDLE_MARKER is unreadable; the bundle is damaged"
  read -r b_platform b_abi b_node b_version <<<"$bundle_for"
  note "offline bundle: svcmaps $b_version for $b_platform, Node v$b_node (module ABI $b_abi)"
  if [[ $b_platform != "$NODE_PLATFORM" || $b_abi != "$NODE_ABI" ]]; then
    die "this bundle was built for $b_platform with Node ${b_node%%.*} (module ABI $b_abi), but this machine runs $NODE_PLATFORM with Node v$NODE_VERSION (module ABI $NODE_ABI): its native modules cannot load here. Build the bundle on a machine with the same platform and Node.js major version (npm run bundle), or install from a clone with network access (npm ci)."
  fi
fi

if [[ $BUNDLED -eq 1 ]]; then
  NPM_BIN=''
  note "npm is not needed (offline bundle)"
elif NPM_BIN=$(command -v npm 2>/dev/null); then
  note "npm $("$NPM_BIN" --version 2>/dev/null || printf '?') ($NPM_BIN)"
elif [[ $SKIP_NPM -eq 1 ]]; then
  warn "npm was not found on PATH (ignored: the npm step is skipped)"
else
  die "npm was not found on PATH. It ships with Node.js from NodeSource and nodejs.org; with another Node.js package install npm as well."
fi

say "Checking build tools"
if [[ $BUNDLED -eq 1 ]]; then
  note "not needed: the bundle's native modules are already built"
else
  missing=()
  for tool in python3 make g++; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    msg="missing build tools: ${missing[*]}. better-sqlite3 compiles its native module from source during npm ci when no prebuilt binary can be downloaded. Install them with: sudo apt-get install -y python3 make g++"
    if [[ $SKIP_NPM -eq 1 ]]; then warn "$msg (ignored: the npm step is skipped)"; else die "$msg"; fi
  else
    note "python3, make and g++ found"
  fi
fi
# The unit hides /home, /root and /run/user from the service (ProtectHome=yes);
# anything it needs from there needs ProtectHome=read-only instead.
PROTECT_HOME=yes
for p in "$PREFIX" "$DATA" "$NODE_BIN" "$(realpath -m -- "$NODE_BIN")"; do
  case $p in
    /home|/home/*|/root|/root/*|/run/user|/run/user/*) PROTECT_HOME=read-only ;;
  esac
done
if [[ $UNIT_MODE != none && $PROTECT_HOME != yes ]]; then
  warn "the app, the data directory or node lives under /home, /root or /run/user; the unit uses ProtectHome=read-only instead of ProtectHome=yes. A location such as /opt/svcmaps and /var/lib/svcmaps is preferable."
fi

# ------------------------------------------------------------ user ----

SVC_GROUP=''
say "Service user"
if [[ $IS_ROOT -eq 1 ]]; then
  if id -u "$SVC_USER" >/dev/null 2>&1; then
    note "user $SVC_USER exists"
  else
    command -v useradd >/dev/null 2>&1 || die "useradd was not found (package: passwd)"
    if getent group "$SVC_USER" >/dev/null 2>&1; then group_opt=(--gid "$SVC_USER"); else group_opt=(--user-group); fi
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "${group_opt[@]}" "$SVC_USER"
    note "created system user $SVC_USER"
  fi
  SVC_GROUP=$(id -gn "$SVC_USER")
else
  note "skipped (not root); the data directory will belong to $CURRENT_USER"
fi

# ------------------------------------------------------------- npm ----

NPM_RAN=0
say "Installing dependencies and building"
if [[ $BUNDLED -eq 1 ]]; then
  note "skipped: offline bundle (node_modules and dist/ are bundled)"
elif [[ $SKIP_NPM -eq 1 ]]; then
  note "skipped (SVCMAPS_INSTALL_SKIP_NPM is set)"
else
  [[ -f $PREFIX/package-lock.json ]] ||
    die "$PREFIX/package-lock.json is missing: npm ci installs exactly what the lock file names (restore it from git)"
  # The same command CI uses. --include=dev: the build (prepare script) needs
  # TypeScript even when NODE_ENV=production is set in this shell.
  npm_cmd=(ci --include=dev --no-audit --no-fund)
  note "npm ${npm_cmd[*]} in $PREFIX (this takes a few minutes)"
  (cd "$PREFIX" && "$NPM_BIN" "${npm_cmd[@]}") ||
    die "npm ${npm_cmd[*]} failed in $PREFIX (see the output above). Missing build tools? sudo apt-get install -y python3 make g++"
  NPM_RAN=1
fi

# ---------------------------------------------------------- verify ----

say "Verifying the CLI"
# (The CLI is always run as `node bin/svcmaps`; the executable bit is for operators typing bin/svcmaps.)
[[ -x $PREFIX/bin/svcmaps ]] || chmod a+rx "$PREFIX/bin/svcmaps" 2>/dev/null ||
  warn "$PREFIX/bin/svcmaps is not executable and $CURRENT_USER cannot change that; run it as: node $PREFIX/bin/svcmaps"
CLI_OK=0
if cli_out=$(cd "$PREFIX" && "$NODE_BIN" bin/svcmaps --help 2>&1); then
  CLI_OK=1
  note "node bin/svcmaps --help works"
else
  msg="'node bin/svcmaps --help' failed in $PREFIX:"$'\n'"$(printf '%s\n' "$cli_out" | tail -n 15)"
  if [[ $SKIP_NPM -eq 1 ]]; then
    warn "$msg"$'\n'"(continuing: the npm step that builds dist/ was skipped)"
  else
    die "$msg"
  fi
fi

# Native modules: a failed build, or a bundle from another machine, shows here rather than in the service.
if [[ $CLI_OK -eq 1 ]]; then
  if native_out=$(cd "$PREFIX" && "$NODE_BIN" -e '
      const Database = require("better-sqlite3");
      new Database(":memory:").prepare("SELECT 1").get();
      require("@napi-rs/canvas").createCanvas(1, 1);' 2>&1); then
    note "native modules load (better-sqlite3, @napi-rs/canvas)"
  else
    msg="the native modules do not load with $NODE_BIN:"$'\n'"$(printf '%s\n' "$native_out" | tail -n 10)"
    if [[ $SKIP_NPM -eq 1 ]]; then warn "$msg"; else die "$msg"; fi
  fi
  # The HTTP server's uWebSockets.js build ships binaries for Node 16, 18 and 20 (module ABIs 93, 108, 115) only.
  # On any other Node it loads a Node.js fallback that lacks calls the server makes on every request
  # (HttpRequest.forEach, getRemoteAddressAsText, endWithoutBody: "Not implemented"), so the server would start
  # and then fail its first request.
  uws_bin=$PREFIX/node_modules/uWebSockets.js/binaries/uws_${NODE_PLATFORM/-/_}_${NODE_ABI}.node
  if [[ -f $uws_bin ]]; then
    note "uWebSockets.js has a native binary for this Node ABI ($NODE_ABI)"
  else
    msg="uWebSockets.js has no native binary for $NODE_PLATFORM with Node v$NODE_VERSION (module ABI $NODE_ABI; it ships them for Node 16, 18 and 20). Its Node.js fallback lacks calls the server makes on every request, so svcmaps cannot serve on this Node version: install Node.js 20 (see --help)."
    if [[ $SKIP_NPM -eq 1 ]]; then warn "$msg"; else die "$msg"; fi
  fi
fi

# The service user must be able to read the app and run node (e.g. not under
# /root or a private home directory).
as_svc_user() { runuser -u "$SVC_USER" -- "$@"; }
CAN_SWITCH=0
if [[ $IS_ROOT -eq 1 && $SVC_USER != root ]] && command -v runuser >/dev/null 2>&1; then
  CAN_SWITCH=1
  if [[ $CLI_OK -eq 1 ]]; then
    (cd / && as_svc_user "$NODE_BIN" "$PREFIX/bin/svcmaps" --help >/dev/null 2>&1) ||
      warn "$SVC_USER cannot run '$NODE_BIN $PREFIX/bin/svcmaps --help' (root can): check that $SVC_USER can read $PREFIX and every directory above it, and can run $NODE_BIN"
  else
    (cd / && as_svc_user "$NODE_BIN" -e 0 >/dev/null 2>&1 && as_svc_user test -r "$PREFIX/bin/svcmaps") ||
      warn "$SVC_USER cannot run $NODE_BIN or read $PREFIX/bin/svcmaps: check the permissions of $PREFIX and every directory above it"
  fi
fi

# ------------------------------------------------------- data dir ----

say "Data directory"
if [[ -d $DATA ]]; then
  note "$DATA exists"
else
  mkdir -p -- "$DATA" 2>/dev/null ||
    die "cannot create $DATA as $CURRENT_USER; pass --data with a directory you can create$([[ $IS_ROOT -eq 1 ]] || printf ', or run as root')"
  note "created $DATA"
fi
old_mode=$(stat -c '%a' -- "$DATA")
if [[ $old_mode != 700 ]]; then
  chmod 0700 -- "$DATA" || die "cannot chmod 0700 $DATA (owned by $(stat -c '%U' -- "$DATA"))"
  note "mode set to 0700 (was $old_mode)"
fi
if [[ $IS_ROOT -eq 1 ]]; then
  if [[ $(stat -c '%U:%G' -- "$DATA") != "$SVC_USER:$SVC_GROUP" ]]; then
    chown -- "$SVC_USER:$SVC_GROUP" "$DATA"
    note "owner set to $SVC_USER:$SVC_GROUP"
  fi
  # Files created by commands run as root (e.g. an import) would be unwritable
  # for the service: hand them back.
  fixed=$(find "$DATA" -xdev \( ! -user "$SVC_USER" -o ! -group "$SVC_GROUP" \) -print \
            -exec chown -h -- "$SVC_USER:$SVC_GROUP" {} + | wc -l)
  [[ $fixed -eq 0 ]] || note "gave $fixed file(s) inside $DATA back to $SVC_USER:$SVC_GROUP"
  if [[ $CAN_SWITCH -eq 1 ]] && ! as_svc_user test -w "$DATA"; then
    warn "$SVC_USER cannot write $DATA: check that it can enter every directory above it"
  fi
else
  owner=$(stat -c '%U' -- "$DATA")
  [[ $owner == "$CURRENT_USER" ]] || warn "$DATA is owned by $owner, not $CURRENT_USER"
fi
note "$(stat -c '%A %U:%G %n' -- "$DATA")"

# A svcmaps.pid that names no running svcmaps server (carried from the machine the data was prepared on, or left by
# a crash) would point `svcmaps reload` and `status` at whatever process now has that pid: remove it.
PID_FILE=$DATA/svcmaps.pid
if [[ -f $PID_FILE ]]; then
  old_pid=$(grep -o '"pid":[0-9]*' -- "$PID_FILE" | head -n 1 | cut -d: -f2 || true)
  if [[ -n $old_pid ]] && tr '\0' ' ' <"/proc/$old_pid/cmdline" 2>/dev/null | grep -q 'svcmaps.* serve'; then
    note "$PID_FILE: svcmaps server $old_pid is running"
  else
    rm -f -- "$PID_FILE"
    note "removed a stale $PID_FILE (pid ${old_pid:-?} is not a running svcmaps server here)"
  fi
fi

# The tile-token secret signs tile tokens; the server refuses it (fails closed) when group or others may read it.
# cp, scp, rsync and tar keep its mode 0600; a copy through a medium without Unix modes (a FAT/exFAT stick) does
# not, so the installer tightens it again and says so.
SECRET=$DATA/tile-token.secret
if [[ -f $SECRET ]]; then
  secret_mode=$(stat -c '%a' -- "$SECRET")
  if (( (8#$secret_mode & 8#077) != 0 )); then
    chmod 0600 -- "$SECRET" || die "cannot chmod 0600 $SECRET"
    warn "$SECRET had mode $secret_mode; set to 0600 (the server refuses a secret that others can read). If the copy went through hands you do not trust, delete it: the server makes a new one, and tile tokens already handed out stop working."
  else
    note "$SECRET has mode $secret_mode"
  fi
fi

# ----------------------------------------------------------- unit ----

render_unit() {
  cat <<EOF
# svcmaps maps API server.
# Written by $PREFIX/$SCRIPT_NAME; re-running it rewrites this file.
# Put local changes in a drop-in instead: systemctl edit $UNIT_NAME
[Unit]
Description=svcmaps maps API server
After=network.target

[Service]
Type=simple
User=$SVC_USER
WorkingDirectory=$DATA
Environment=NODE_ENV=production
# malloc backs the road graph with transparent huge pages (routes ~6% faster at
# country scale; see src/ops/huge-pages.ts). Harmless where THP is off or always.
Environment=GLIBC_TUNABLES=glibc.malloc.hugetlb=1
ExecStart=$NODE_BIN $PREFIX/bin/svcmaps serve --data $DATA --host $HOST --port $PORT
# svcmaps reload signals the server (SIGHUP, found through svcmaps.pid in the
# data directory) and waits until it reports the re-opened data.
ExecReload=$NODE_BIN $PREFIX/bin/svcmaps reload --data $DATA
Restart=on-failure
RestartSec=2
KillSignal=SIGTERM
TimeoutStopSec=35
LimitNOFILE=65536
UMask=0077

# Hardening: the whole file system is read-only for the service except the
# data directory; its own /tmp; no privilege gain.
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths=$DATA
PrivateTmp=yes
ProtectHome=$PROTECT_HOME
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
RestrictSUIDSGID=yes
LockPersonality=yes
EOF
  if (( PORT < 1024 )) && [[ $SVC_USER != root ]]; then
    cat <<EOF
AmbientCapabilities=CAP_NET_BIND_SERVICE
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
EOF
  fi
  cat <<EOF

[Install]
WantedBy=multi-user.target
EOF
}

UNIT_CHANGED=0
UNIT_INSTALLED=0
TMP_UNIT=''
cleanup() { [[ -z $TMP_UNIT ]] || rm -f -- "$TMP_UNIT"; }
trap cleanup EXIT

say "systemd unit"
case $UNIT_MODE in
  none)
    note "skipped (--no-systemd)"
    ;;
  print)
    note "$UNIT_WHY."
    if [[ $IS_ROOT -ne 1 ]]; then
      note "To install it, re-run this installer as root (sudo $PREFIX/$SCRIPT_NAME ...), or save the"
      note "unit below as $UNIT_FILE and run: systemctl daemon-reload"
      [[ $SVC_USER == "$CURRENT_USER" ]] ||
        note "The data directory must then belong to $SVC_USER: chown -R $SVC_USER: $DATA"
    else
      note "On a machine running systemd, save it as $UNIT_FILE and run: systemctl daemon-reload"
    fi
    [[ $DATA_IN_TMP -eq 0 ]] ||
      warn "$DATA is under a temporary directory; with PrivateTmp=yes the service cannot see it. Use a persistent directory for a real service."
    printf -- '----- %s -----\n' "$UNIT_FILE"
    render_unit
    printf -- '----- end of unit -----\n'
    ;;
  install|file)
    new_unit=$(render_unit)
    if [[ -f $UNIT_FILE && "$(cat -- "$UNIT_FILE")" == "$new_unit" ]]; then
      note "$UNIT_FILE is up to date"
    else
      TMP_UNIT=$(mktemp "$UNIT_FILE.tmp.XXXXXX")
      printf '%s\n' "$new_unit" >"$TMP_UNIT"
      chmod 0644 -- "$TMP_UNIT"
      if [[ -f $UNIT_FILE ]]; then
        note "updating $UNIT_FILE:"
        diff -u -- "$UNIT_FILE" "$TMP_UNIT" | sed 's/^/      /' || true
      fi
      mv -f -- "$TMP_UNIT" "$UNIT_FILE"
      TMP_UNIT=''
      UNIT_CHANGED=1
      note "wrote $UNIT_FILE"
    fi
    if [[ $UNIT_MODE == install ]]; then
      systemctl daemon-reload
      note "systemctl daemon-reload done"
      UNIT_INSTALLED=1
    else
      note "not installed (--unit-file); check it with: systemd-analyze verify $UNIT_FILE"
      note "install it with: cp $UNIT_FILE $SYSTEM_UNIT_FILE && systemctl daemon-reload"
      [[ $DATA_IN_TMP -eq 0 ]] ||
        warn "$DATA is under a temporary directory; with PrivateTmp=yes the service cannot see it. Use a persistent directory for a real service."
    fi
    ;;
esac

# ---------------------------------------------------------- start ----

SERVICE_STARTED=0
START_FAILED=0
if [[ $UNIT_INSTALLED -eq 1 ]]; then
  was_active=0
  systemctl is-active --quiet "$UNIT_NAME" && was_active=1
  if [[ $START -eq 1 ]]; then
    say "Starting the service"
    systemctl enable --now "$UNIT_NAME" || warn "systemctl enable --now $UNIT_NAME failed"
    if [[ $was_active -eq 1 && ( $UNIT_CHANGED -eq 1 || $NPM_RAN -eq 1 ) ]]; then
      if systemctl restart "$UNIT_NAME"; then
        note "restarted $UNIT_NAME to pick up the new build/unit"
      else
        warn "systemctl restart $UNIT_NAME failed"
      fi
    fi
    sleep 2
    if systemctl is-active --quiet "$UNIT_NAME"; then
      SERVICE_STARTED=1
      note "$UNIT_NAME is enabled and running"
    else
      START_FAILED=1
      warn "$UNIT_NAME did not stay up; see: journalctl -u $UNIT_NAME -n 50 --no-pager"
      systemctl --no-pager --lines=20 status "$UNIT_NAME" >&2 || true
    fi
  elif [[ $was_active -eq 1 && ( $UNIT_CHANGED -eq 1 || $NPM_RAN -eq 1 ) ]]; then
    note "$UNIT_NAME is running the previous build/unit; apply the new one with: systemctl restart $UNIT_NAME"
  fi
fi

# ------------------------------------------------------ next steps ----

# How to run the CLI as the service user, so that files in the data directory
# stay owned by it.
case $(dirname -- "$NODE_BIN") in
  /usr/bin|/bin|/usr/local/bin) cli="$PREFIX/bin/svcmaps" ;;
  *)                            cli="$NODE_BIN $PREFIX/bin/svcmaps" ;;
esac
run_as=''
if [[ $IS_ROOT -eq 1 && $SVC_USER != root ]]; then
  if command -v sudo >/dev/null 2>&1; then run_as="sudo -u $SVC_USER "; else run_as="runuser -u $SVC_USER -- "; fi
fi

case $HOST in
  0.0.0.0) url_host=127.0.0.1 ;;
  ::)      url_host='[::1]' ;;
  *:*)     url_host="[$HOST]" ;;
  *)       url_host=$HOST ;;
esac

serve_cmd="$run_as$NODE_BIN $PREFIX/bin/svcmaps serve --data $DATA --host $HOST --port $PORT"

echo
say "Done. Next steps:"
cat <<EOF

  1. Create an admin API key:
       $run_as$cli keys create --data $DATA --role super_admin --name admin

  2. Import OpenStreetMap data (the file must be readable by $([[ -n $run_as ]] && printf '%s' "$SVC_USER" || printf '%s' "$CURRENT_USER")):
       $run_as$cli import <file.osm.pbf> --data $DATA

EOF
if [[ $UNIT_INSTALLED -eq 1 ]]; then
  if [[ $SERVICE_STARTED -eq 1 ]]; then
    cat <<EOF
  3. The service is enabled and running (--start); restart it when needed:
       systemctl restart $UNIT_NAME      (logs: journalctl -u $UNIT_NAME -f)

EOF
  else
    cat <<EOF
  3. Start the service (systemctl enable --now $UNIT_NAME also starts it at boot):
       systemctl start $UNIT_NAME        (logs: journalctl -u $UNIT_NAME -f)
     or run the server in the foreground:
       $serve_cmd

EOF
  fi
else
  cat <<EOF
  3. Start the server:
       $serve_cmd

EOF
fi
cat <<EOF
  4. Check health:
       curl http://$url_host:$PORT/healthz

EOF
if [[ $HOST == 127.0.0.1 || $HOST == localhost || $HOST == ::1 ]]; then
  note "The server listens on $HOST only; put a reverse proxy in front of it or re-run with --host 0.0.0.0 to expose it."
fi
if [[ $START_FAILED -eq 1 ]]; then
  warn "installed, but $UNIT_NAME is not running (see the warning above)"
  exit 1
fi
