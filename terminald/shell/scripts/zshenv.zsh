# Phantom shell integration for zsh.
#
# Phantom starts zsh with ZDOTDIR pointing at the directory holding this file,
# so zsh reads it as $ZDOTDIR/.zshenv. It restores the user's ZDOTDIR (or
# unsets it), sources the user's .zshenv, and installs the OSC 133 prompt marks
# and the OSC 7 working-directory report as precmd/preexec hooks. zsh reads the
# remaining startup files (.zprofile, .zshrc, .zlogin) from the restored
# ZDOTDIR, as it would have without Phantom. The user's rc files are never
# modified. Builtins are quoted so that aliases cannot change them.

# Restore ZDOTDIR: "+value" if it was set, "-" if it was not.
if [[ ${_PHANTOM_SI_ZDOTDIR-} == +* ]]; then
    'builtin' 'export' ZDOTDIR="${_PHANTOM_SI_ZDOTDIR#+}"
else
    'builtin' 'unset' 'ZDOTDIR'
fi
'builtin' 'unset' '_PHANTOM_SI_ZDOTDIR'

{
    # zsh reads $HOME/.zshenv when ZDOTDIR is unset, and ignores unreadable
    # rc files.
    'builtin' 'typeset' -g __phantom_rc=${ZDOTDIR-$HOME}/.zshenv
    [[ ! -r $__phantom_rc ]] || 'builtin' 'source' '--' "$__phantom_rc"
} always {
    'builtin' 'unset' '__phantom_rc'
    if [[ -o interactive ]]; then
        'builtin' 'typeset' -gi __phantom_in_cmd=0

        # __phantom_precmd_d reports the end of the previous command (133;D
        # with its status) and the working directory (OSC 7). It is moved to
        # the front of precmd_functions so that output of the user's hooks is
        # not counted as command output. zsh gives every precmd hook the same
        # $?, so the status is right wherever it runs.
        __phantom_precmd_d() {
            'builtin' 'local' -i __phantom_status=$?
            'builtin' 'emulate' -L zsh -o extended_glob -o no_aliases
            if (( __phantom_in_cmd )); then
                __phantom_in_cmd=0
                'builtin' 'print' -rn -- $'\e]133;D;'$__phantom_status$'\a'
            fi
            'builtin' 'local' LC_ALL=C
            'builtin' 'local' url="${PWD//(#m)[^A-Za-z0-9\/._~-]/%${(l:2::0:)$(( [##16] #MATCH ))}}"
            'builtin' 'print' -rn -- $'\e]7;file://'$HOST$url$'\a'
        }

        # __phantom_precmd_a reports the start of the prompt (133;A). It is
        # kept last among the precmd hooks, just before zsh draws PS1.
        __phantom_precmd_a() {
            'builtin' 'emulate' -L zsh -o no_aliases
            'builtin' 'print' -rn -- $'\e]133;A\a'
            if (( ${precmd_functions[(I)__phantom_precmd_a]} != ${#precmd_functions} )); then
                precmd_functions=(${precmd_functions:#__phantom_precmd_a} __phantom_precmd_a)
            fi
        }

        # __phantom_line_init reports the end of the prompt (133;B). zle runs
        # zle-line-init after it has drawn PS1 and RPS1, with the cursor where
        # input starts, so the mark needs no change to PS1 and survives themes
        # that rebuild PS1 in their own precmd hooks.
        __phantom_line_init() {
            [[ $CONTEXT != start ]] || 'builtin' 'print' -rn -- $'\e]133;B\a'
        }

        # __phantom_preexec reports the command line zsh is about to run
        # (133;E; zsh passes it as typed, after history expansion, as $1)
        # and the start of its output (133;C). A line too long for one OSC
        # (terminald keeps 4096 bytes) is not reported.
        __phantom_preexec() {
            __phantom_in_cmd=1
            'builtin' 'emulate' -L zsh -o extended_glob -o no_aliases
            'builtin' 'local' LC_ALL=C
            'builtin' 'local' url="${1//(#m)[^A-Za-z0-9\/._~-]/%${(l:2::0:)$(( [##16] #MATCH ))}}"
            if [[ -n $1 ]] && (( ${#url} <= 4000 )); then
                'builtin' 'print' -rn -- $'\e]133;E;cmdline_url='$url$'\a'
            fi
            'builtin' 'print' -rn -- $'\e]133;C\a'
        }

        # __phantom_init runs as a precmd hook at the first prompt, after all
        # of the user's startup files: it puts the hooks in place (around the
        # user's) and removes itself. For this first prompt, whose hook list
        # zsh has already copied, it reports the directory and the prompt
        # start itself.
        __phantom_init() {
            'builtin' 'emulate' -L zsh -o no_aliases
            precmd_functions=(__phantom_precmd_d ${precmd_functions:#__phantom_*} __phantom_precmd_a)
            preexec_functions=(${preexec_functions:#__phantom_preexec} __phantom_preexec)
            'builtin' 'autoload' -Uz -- add-zle-hook-widget
            add-zle-hook-widget zle-line-init __phantom_line_init
            __phantom_precmd_d
            __phantom_precmd_a
            'builtin' 'unfunction' __phantom_init
        }

        'builtin' 'typeset' -ga precmd_functions
        precmd_functions+=(__phantom_init)
    fi
}
