# bash completion for gpuopt(1). Installed as
# share/bash-completion/completions/gpuopt, where bash-completion loads it on
# first use; or `source` it. Plain bash (compgen), no bash-completion helper.
# tests/cli/test_completion.sh checks it offers every option of every
# command's --help.

_gpuopt_devices() {
    # Device ids for --device: what `gpuopt devices --list` prints first.
    gpuopt devices --list 2>/dev/null | while read -r id _; do printf '%s\n' "$id"; done
    printf '%s\n' auto gpu cpu cuda rocm opencl
}

_gpuopt() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="cache devices doctor gres help labels memory plan profile tune version"
    local backends="auto cpu cuda opencl rocm"
    COMPREPLY=()

    # The command is the first word that is not an option.
    local cmd="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) ;;
        *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [ -z "$cmd" ]; then
        if [[ $cur == -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "--help --version -h -V" -- "$cur")
        else
            mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
        fi
        return
    fi

    # profile: from the first word that is not an option (or after --), the
    # words are the program's: a command, then its arguments.
    if [ "$cmd" = profile ]; then
        local j skip=0
        for ((j = i + 1; j < COMP_CWORD; j++)); do
            if [ $skip = 1 ]; then skip=0; continue; fi
            case ${COMP_WORDS[j]} in
            -o | --output) skip=1 ;;
            --) j=$((j + 1)); break ;;
            -*) ;;
            *) break ;;
            esac
        done
        if [ "$j" -lt "$COMP_CWORD" ]; then
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return
        fi
        if [ "$skip" = 0 ] && { [[ $cur != -* ]] || [ "${COMP_WORDS[j - 1]}" = -- ]; }; then
            mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            return
        fi
    fi

    # A value for the option before the cursor.
    case $prev in
    -o | --output) [ "$cmd" = profile ] && { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return; } ;;
    -b | --backend) mapfile -t COMPREPLY < <(compgen -W "$backends" -- "$cur"); return ;;
    -d | --device) mapfile -t COMPREPLY < <(compgen -W "$(_gpuopt_devices)" -- "$cur"); return ;;
    -l | --level) [ "$cmd" = plan ] && { mapfile -t COMPREPLY < <(compgen -W "0 1 2" -- "$cur"); return; } ;;
    --strategy) mapfile -t COMPREPLY < <(compgen -W "auto exhaustive random annealing model" -- "$cur"); return ;;
    --cache) mapfile -t COMPREPLY < <(compgen -W "use refresh off" -- "$cur"); return ;;
    --isolation) mapfile -t COMPREPLY < <(compgen -W "auto in-process worker" -- "$cur"); return ;;
    --csv) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    -f | --format) [ "$cmd" = labels ] && { mapfile -t COMPREPLY < <(compgen -W "nfd json" -- "$cur"); return; } ;;
    -o | --output) [ "$cmd" = labels ] && { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return; } ;;
    -p | --prefix) [ "$cmd" = labels ] && return ;;
    --node) return ;;
    --budget | --seed | --size | --model-bytes | --item-bytes | --launches-per-step | \
        --items-per-step | --step-time | --h2d-bytes | --d2h-bytes) return ;;
    -w | --watch | -n | --count) [ "$cmd" = memory ] && return ;;
    esac

    local opts=""
    case $cmd in
    devices) opts="--json --list --backend --help -j -l -b -h" ;;
    plan)
        # After --apply-env, the words belong to the command it runs.
        for ((i = 1; i < COMP_CWORD; i++)); do
            if [ "${COMP_WORDS[i]}" = --apply-env ]; then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
                return
            fi
        done
        opts="--level --device --backend --json --env --apply-env --bind --model-bytes --item-bytes
              --precision-sensitive --reduced-precision --quantized --latency --throughput
              --fixed-shapes --memory-bound --compute-bound --launches-per-step --step-time
              --items-per-step --h2d-bytes --d2h-bytes --help -l -d -b -j -e -h" ;;
    labels) opts="--format --output --prefix --backend --help -f -o -p -b -h" ;;
    gres) opts="--node --backend --help -n -b -h" ;;
    memory) opts="--watch --count --device --backend --json --help -w -n -d -b -j -h" ;;
    doctor) opts="--json --verbose --help -j -v -h" ;;
    profile) opts="--output --help -o -h" ;;
    version) opts="--json --help -j -h" ;;
    cache)
        opts="--json --device --all --help -j -d -a -h"
        if [[ $cur != -* ]]; then
            mapfile -t COMPREPLY < <(compgen -W "list show verify clear path export import" -- "$cur")
            return
        fi ;;
    tune)
        opts="--strategy --budget --seed --csv --json --device --size --cache --backend --isolation --help
              -j -d -b -h"
        if [[ $cur != -* ]]; then
            mapfile -t COMPREPLY < <(compgen -f -X '!*.json' -- "$cur"; compgen -d -- "$cur")
            return
        fi ;;
    help) mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur"); return ;;
    esac
    mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
}

complete -F _gpuopt gpuopt
