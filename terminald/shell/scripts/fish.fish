# Phantom shell integration for fish.
#
# Phantom starts fish with its own directory first in XDG_DATA_DIRS, so fish
# sources this file from fish/vendor_conf.d before the user's config.fish. It
# restores XDG_DATA_DIRS for child processes and installs the OSC 133 prompt
# marks and the OSC 7 working-directory report from fish events (fish 3.6 does
# not emit OSC 133 itself). The user's config files are never modified.

# Restore XDG_DATA_DIRS: "+value" if it was set, "-" if it was not.
if set -q _PHANTOM_SI_XDG_DATA_DIRS
    if string match -q -- '+*' $_PHANTOM_SI_XDG_DATA_DIRS
        set -gx XDG_DATA_DIRS (string sub -s 2 -- $_PHANTOM_SI_XDG_DATA_DIRS)
    else
        set -e XDG_DATA_DIRS
    end
    set -e _PHANTOM_SI_XDG_DATA_DIRS

    if status is-interactive
        set -g __phantom_in_cmd 0

        # __phantom_prompt_start reports the working directory (OSC 7) and the
        # start of the prompt (133;A), and makes sure fish_prompt ends with
        # 133;B: if fish_prompt is not our wrapper (first prompt, or the user
        # redefined it), the user's fish_prompt is copied to
        # __phantom_user_prompt and wrapped.
        function __phantom_prompt_start --on-event fish_prompt
            printf '\e]7;file://%s%s\a\e]133;A\a' $hostname (string escape --style=url -- $PWD)
            if not functions fish_prompt | string match -q -- '*__phantom_user_prompt*'
                functions --erase __phantom_user_prompt
                functions --copy fish_prompt __phantom_user_prompt
                # $status is passed on unchanged to __phantom_user_prompt.
                function fish_prompt
                    __phantom_user_prompt
                    printf '\e]133;B\a'
                end
            end
        end

        # 133;E: the command line fish is about to run (fish passes it as
        # $argv[1]), unless too long for one OSC (terminald keeps 4096
        # bytes); 133;C: it starts running.
        function __phantom_preexec --on-event fish_preexec
            set -g __phantom_in_cmd 1
            set -l url (string escape --style=url -- $argv[1])
            if test -n "$argv[1]"; and test (string length -- "$url") -le 4000
                printf '\e]133;E;cmdline_url=%s\a' "$url"
            end
            printf '\e]133;C\a'
        end

        # 133;D;<status>: the command line finished.
        function __phantom_postexec --on-event fish_postexec
            set -l s $status
            if test $__phantom_in_cmd = 1
                set -g __phantom_in_cmd 0
                printf '\e]133;D;%s\a' $s
            end
        end
    end
end
