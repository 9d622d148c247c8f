# Phantom shell integration for bash.
#
# Phantom starts bash as "bash --posix" with ENV pointing at this file: an
# interactive POSIX-mode bash reads $ENV and no other startup file. This file
# leaves POSIX mode, undoes what the injection changed, reads the startup files
# bash would normally have read, and then installs the OSC 133 prompt marks and
# the OSC 7 working-directory report. The user's rc files are never modified.
#
# Everything defined here is prefixed __phantom_; nothing is exported.

builtin set +o posix
# POSIX mode turns inherit_errexit on and "set +o posix" leaves it on.
builtin shopt -u inherit_errexit 2>/dev/null

# Restore ENV: "+value" if it was set, "-" if it was not.
if [[ ${_PHANTOM_SI_ENV-} == +* ]]; then
    builtin export ENV="${_PHANTOM_SI_ENV#+}"
else
    builtin unset ENV
fi
builtin unset _PHANTOM_SI_ENV

# In POSIX mode bash defaults HISTFILE to ~/.sh_history instead of
# ~/.bash_history. A default (not exported) value is put back to bash's normal
# default; a HISTFILE that came from the environment is left alone.
if [[ ${HISTFILE-} == */.sh_history && ${HISTFILE@a} != *x* ]]; then
    HISTFILE=${HISTFILE%/.sh_history}/.bash_history
fi

# The functions are defined before the user's startup files are read, so the
# user's aliases cannot change how they are parsed.

# __phantom_urlencode sets __phantom_url to $1 with every byte outside
# [A-Za-z0-9/._~-] percent-encoded.
__phantom_urlencode() {
    builtin local LC_ALL=C
    builtin local s="$1" out="" c="" i=0
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        case $c in
        [A-Za-z0-9/._~-]) out+=$c ;;
        *) builtin printf -v c '%%%02X' "'$c"; out+=$c ;;
        esac
    done
    __phantom_url=$out
}

# __phantom_cmdline prints the 133;E mark with the command line bash is
# about to run, as its history has it (after history expansion). It runs
# in PS0's command substitution, a subshell, with $1 the history number
# PS0 shows (\!): equal to the number the prompt showed
# (__phantom_histn, from HISTCMD) only when the line was just added to the
# history. A line the history left out (history off, HISTCONTROL,
# HISTIGNORE) is not reported, rather than reported wrong. Lines too long
# for one OSC (terminald keeps 4096 bytes) are not reported either.
__phantom_cmdline() {
    [[ -o history && -n ${__phantom_histn-} && $1 == "$__phantom_histn" ]] || builtin return 0
    builtin local h re='^ *[0-9]+\*?  '
    h=$(HISTTIMEFORMAT='' builtin history 1) || builtin return 0
    [[ $h =~ $re ]] || builtin return 0
    h=${h:${#BASH_REMATCH[0]}}
    ((${#h} <= 4000)) || builtin return 0
    if [[ $h == *[!A-Za-z0-9/._~-]* ]]; then
        __phantom_urlencode "$h"
    else
        __phantom_url=$h
    fi
    ((${#__phantom_url} <= 4000)) || builtin return 0
    builtin printf '\e]133;E;cmdline_url=%s\a' "$__phantom_url"
}

# __phantom_prompt_start runs first in PROMPT_COMMAND: it reports the end of
# the previous command (133;D with its exit status) and the working directory,
# and returns the status it found so that the user's PROMPT_COMMAND sees the
# right $?.
__phantom_prompt_start() {
    builtin local __phantom_status=$?
    if [[ ${__phantom_in_cmd-} == 1 ]]; then
        __phantom_in_cmd=
        builtin printf '\e]133;D;%s\a' "$__phantom_status" >&2
    fi
    if [[ $PWD != "${__phantom_cwd-}" ]]; then
        __phantom_cwd=$PWD
        if [[ $PWD == *[!A-Za-z0-9/._~-]* ]]; then
            __phantom_urlencode "$PWD"
            __phantom_cwd_url=$__phantom_url
        else
            __phantom_cwd_url=$PWD
        fi
    fi
    builtin printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "${__phantom_cwd_url-}" >&2
    return "$__phantom_status"
}

# __phantom_prompt_end runs last in PROMPT_COMMAND, after anything of the
# user's that rebuilds PS1: it makes PS1 start with 133;A and end with 133;B,
# and makes PS0 (shown after a command line is read, before it runs) emit
# 133;E with the command line (__phantom_cmdline) and 133;C, and note, in
# this shell, that a command is running. PS0 is expanded in the current
# shell, but a $(...) in it runs in a subshell, so the flag is set by an
# arithmetic array subscript instead. It also notes the history number the
# next line will get (after whatever the user's PROMPT_COMMAND did to the
# history).
__phantom_prompt_end() {
    builtin local __phantom_status=$?
    __phantom_histn=${HISTCMD-}
    if [[ $PS1 != "${__phantom_ps1-}" ]]; then
        builtin local p="$PS1"
        p=${p//"$__phantom_mark_a"/}
        p=${p//"$__phantom_mark_b"/}
        PS1=$__phantom_mark_a$p$__phantom_mark_b
        __phantom_ps1=$PS1
    fi
    if [[ ${PS0-} != *"$__phantom_mark_c" ]]; then
        builtin local p="${PS0-}"
        PS0=${p//"$__phantom_mark_c"/}$__phantom_mark_c
    fi
    return "$__phantom_status"
}

__phantom_mark_a='\[\e]133;A\a\]'
__phantom_mark_b='\[\e]133;B\a\]'
__phantom_mark_c='${__phantom_arr[__phantom_in_cmd=1]-}$(__phantom_cmdline \!)\e]133;C\a'
__phantom_arr=()
__phantom_in_cmd=

# __phantom_install puts __phantom_prompt_start first and __phantom_prompt_end
# last in PROMPT_COMMAND, keeping the user's commands in between, in the
# array form (bash 5.1) if the user made it an array.
__phantom_install() {
    if ((BASH_VERSINFO[0] < 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] < 4))); then
        # No PS0 and no ${var@a} before bash 4.4: no integration.
        return 0
    fi
    if [[ ${PROMPT_COMMAND@a} == *a* ]]; then
        PROMPT_COMMAND=(__phantom_prompt_start "${PROMPT_COMMAND[@]}" __phantom_prompt_end)
    elif [[ -n ${PROMPT_COMMAND-} ]]; then
        PROMPT_COMMAND=__phantom_prompt_start$'\n'$PROMPT_COMMAND$'\n'__phantom_prompt_end
    else
        PROMPT_COMMAND=__phantom_prompt_start$'\n'__phantom_prompt_end
    fi
}

# Read the startup files as bash(1) INVOCATION and run_startup_files() in
# bash's shell.c describe. This runs at the top level (not in a function) so
# that "declare" in the user's files creates globals, as it would normally.
if builtin shopt -q login_shell; then
    if [[ -r /etc/profile ]]; then builtin source /etc/profile; fi
    for __phantom_rc in ~/.bash_profile ~/.bash_login ~/.profile; do
        if [[ -r $__phantom_rc ]]; then builtin source "$__phantom_rc"; break; fi
    done
else
    # SYS_BASHRC is a build-time setting: Debian and Arch use /etc/bash.bashrc.
    for __phantom_rc in /etc/bash.bashrc /etc/bash/bashrc; do
        if [[ -r $__phantom_rc ]]; then builtin source "$__phantom_rc"; break; fi
    done
    if [[ -r ~/.bashrc ]]; then builtin source ~/.bashrc; fi
fi
builtin unset __phantom_rc

__phantom_install
