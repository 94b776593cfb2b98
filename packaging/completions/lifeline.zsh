#compdef lifeline

__lifeline_complete() {
    local -ar non_empty_completions=("${@:#(|:*)}")
    local -ar empty_completions=("${(M)@:#(|:*)}")
    _describe -V '' non_empty_completions -- empty_completions -P $'\'\''
}

__lifeline_custom_complete() {
    local -a completions
    completions=("${(@f)"$("${command_name}" "${@}" "${command_line[@]}")"}")
    if [[ "${#completions[@]}" -gt 1 ]]; then
        __lifeline_complete "${completions[@]:0:-1}"
    fi
}

__lifeline_cursor_index_in_current_word() {
    if [[ -z "${QIPREFIX}${IPREFIX}${PREFIX}" ]]; then
        printf 0
    else
        printf %s "${#${(z)LBUFFER}[-1]}"
    fi
}

_lifeline() {
    emulate -RL zsh -G
    setopt extendedglob nullglob numericglobsort
    unsetopt aliases banghist

    local -xr SAP_SHELL=zsh
    local -x SAP_SHELL_VERSION
    SAP_SHELL_VERSION="$(builtin emulate zsh -c 'printf %s "${ZSH_VERSION}"')"
    local -r SAP_SHELL_VERSION

    local context state state_descr line
    local -A opt_args

    local -r command_name="${words[1]}"
    local -ar command_line=("${words[@]}")
    local -ir current_word_index="$((CURRENT - 1))"

    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'daemon:Run the monitors and sinks in the foreground (systemd runs this).'
            'status:Print the current state once.'
            'check:Ask the daemon to probe now and print the resulting state.'
            'watch:Print the state at once and again on every change, until killed.'
            'config:Validate or print the configuration.'
            'history:List past outages (start, end, duration, worst state) from the event log.'
            'wait-online:Wait until the daemon says online.'
            'run:Run a command when online; run it again if it failed because the connection dropped.'
            'diagnose:Check every layer now, from the cable to HTTP, and say which one fails.'
            'help:Show subcommand help information.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        daemon|status|check|watch|config|history|wait-online|run|diagnose|help)
            "_lifeline_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_lifeline_daemon() {
    local -i ret=1
    local -ar arg_specs=(
        '--config[Config file (default\: $XDG_CONFIG_HOME/lifeline/config.toml, else built-in defaults).]:config:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_status() {
    local -i ret=1
    local -ar arg_specs=(
        '--format[Template, e.g. '\''{icon} {state} {interface}'\''.]:format:'
        '--json[Print every field as one JSON object.]'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_check() {
    local -i ret=1
    local -ar arg_specs=(
        '--format[Template, e.g. '\''{icon} {state} {interface}'\''.]:format:'
        '--json[Print every field as one JSON object.]'
        '--timeout[How long to wait for the daemon'\''s answer.]:timeout:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_watch() {
    local -i ret=1
    local -ar arg_specs=(
        '--format[plain, json, i3bar, waybar, or a template such as '\''{icon} {state}'\''.]:format:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_config() {
    local -i ret=1
    local -ar arg_specs=(
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
        '(-): :->command'
        '(-)*:: :->arg'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0
    case "${state}" in
    command)
        local -ar subcommands=(
            'check:Validate a config file (default: the user'\''s). Exits 0 when valid, 2 when not.'
            'show:Print the effective configuration, defaults included.'
        )
        _describe -V subcommand subcommands && ret=0
        ;;
    arg)
        case "${words[1]}" in
        check|show)
            "_lifeline_config_${words[1]}" && ret=0
            ;;
        esac
        ;;
    esac

    return "${ret}"
}

_lifeline_config_check() {
    local -i ret=1
    local -ar arg_specs=(
        ':file:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_config_show() {
    local -i ret=1
    local -ar arg_specs=(
        '--config[Config file (default\: the user'\''s, else built-in defaults).]:config:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_history() {
    local -i ret=1
    local -ar ___color=('auto' 'always' 'never')
    local -ar arg_specs=(
        '--since[Only outages that ended within this span, e.g. 24h, 7d; for --chart, the span drawn (default\: today and the 6 days before); for --report, the span (default\: today and the 29 days before).]:since:'
        '--chart[Draw a day × hour timeline and a summary (outages, downtime, longest, availability).]'
        '--json[Print the outages as a JSON array (the columns of the report'\''s table).]'
        '--csv[Print the outages as CSV (the columns of the report'\''s table).]'
        '--report[Write an HTML report (timeline, availability, outages, causes) to this file.]:file.html:'
        '--color[Colour the chart\: auto (when standard output is a terminal and NO_COLOR is not set), always or never.]:color:{__lifeline_complete "${___color[@]}"}'
        '--config[Config file naming the log (default\: the user'\''s).]:config:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_wait-online() {
    local -i ret=1
    local -ar arg_specs=(
        '--timeout[How long to wait\: 500ms, 30s, 2m.]:timeout:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_run() {
    local -i ret=1
    local -ar arg_specs=(
        '--timeout[The longest time to wait for the network, over all attempts (default\: no limit). A running CMD is never stopped by it.]:timeout:'
        '--retries[How many times to run CMD again after it failed while the connection was lost.]:retries:'
        '*:command:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_diagnose() {
    local -i ret=1
    local -ar arg_specs=(
        '--json[Print the checks and the verdict as one JSON object.]'
        '--url[The check URL (default\: the config'\''s probe urls).]:url:'
        '--timeout[Timeout of each network check (default\: the config'\''s probe timeout).]:timeout:'
        '--config[Config file whose probe settings to use (default\: the user'\''s).]:config:'
        '--version[Show the version.]'
        '(-h --help)'{-h,--help}'[Show help information.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

_lifeline_help() {
    local -i ret=1
    local -ar arg_specs=(
        '*:subcommands:'
        '--version[Show the version.]'
    )
    _arguments -w -s -S : "${arg_specs[@]}" && ret=0

    return "${ret}"
}

if [[ "${funcstack[1]}" = _lifeline ]]; then
    _lifeline "${@}"
else
    compdef _lifeline lifeline
fi
