function __lifeline_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __lifeline_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __lifeline_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __lifeline_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __lifeline_parse_tokens -S
    set -l unparsed_tokens (__lifeline_tokens -pc)
    switch $unparsed_tokens[1]
    case 'lifeline'
        __lifeline_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'daemon'
            __lifeline_parse_subcommand 0 'config=' 'version' 'h/help'
        case 'status'
            __lifeline_parse_subcommand 0 'format=' 'json' 'version' 'h/help'
        case 'check'
            __lifeline_parse_subcommand 0 'format=' 'json' 'timeout=' 'version' 'h/help'
        case 'watch'
            __lifeline_parse_subcommand 0 'format=' 'version' 'h/help'
        case 'config'
            __lifeline_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'check'
                __lifeline_parse_subcommand 1 'version' 'h/help'
            case 'show'
                __lifeline_parse_subcommand 0 'config=' 'version' 'h/help'
            end
        case 'history'
            __lifeline_parse_subcommand 0 'since=' 'chart' 'json' 'csv' 'report=' 'color=' 'config=' 'version' 'h/help'
        case 'wait-online'
            __lifeline_parse_subcommand 0 'timeout=' 'version' 'h/help'
        case 'run'
            __lifeline_parse_subcommand -r 1 'timeout=' 'retries=' 'version' 'h/help'
        case 'diagnose'
            __lifeline_parse_subcommand 0 'json' 'url=' 'timeout=' 'config=' 'version' 'h/help'
        case 'help'
            __lifeline_parse_subcommand -r 1 'version'
        end
    end
end

function __lifeline_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __lifeline_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __lifeline_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __lifeline_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__lifeline_tokens -p)
    if test -z "$(__lifeline_tokens -t)"
        set -l index (count (__lifeline_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'lifeline' -f
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'daemon' -d 'Run the monitors and sinks in the foreground (systemd runs this).'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'status' -d 'Print the current state once.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'check' -d 'Ask the daemon to probe now and print the resulting state.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'watch' -d 'Print the state at once and again on every change, until killed.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'config' -d 'Validate or print the configuration.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'history' -d 'List past outages (start, end, duration, worst state) from the event log.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'wait-online' -d 'Wait until the daemon says online.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'run' -d 'Run a command when online; run it again if it failed because the connection dropped.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'diagnose' -d 'Check every layer now, from the cable to HTTP, and say which one fails.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline daemon" config' -l 'config' -d 'Config file (default: $XDG_CONFIG_HOME/lifeline/config.toml, else built-in defaults).' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline daemon" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline daemon" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline status" format' -l 'format' -d 'Template, e.g. \'{icon} {state} {interface}\'.' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline status" json' -l 'json' -d 'Print every field as one JSON object.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline status" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline status" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline check" format' -l 'format' -d 'Template, e.g. \'{icon} {state} {interface}\'.' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline check" json' -l 'json' -d 'Print every field as one JSON object.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline check" timeout' -l 'timeout' -d 'How long to wait for the daemon\'s answer.' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline check" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline check" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline watch" format' -l 'format' -d 'plain, json, i3bar, waybar, or a template such as \'{icon} {state}\'.' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline watch" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline watch" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline config" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline config" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline config" -eq 1' -fa 'check' -d 'Validate a config file (default: the user\'s). Exits 0 when valid, 2 when not.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_positional "lifeline config" -eq 1' -fa 'show' -d 'Print the effective configuration, defaults included.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline config check" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline config check" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline config show" config' -l 'config' -d 'Config file (default: the user\'s, else built-in defaults).' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline config show" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline config show" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" since' -l 'since' -d 'Only outages that ended within this span, e.g. 24h, 7d; for --chart, the span drawn (default: today and the 6 days before); for --report, the span (default: today and the 29 days before).' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" chart' -l 'chart' -d 'Draw a day × hour timeline and a summary (outages, downtime, longest, availability).'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" json' -l 'json' -d 'Print the outages as a JSON array (the columns of the report\'s table).'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" csv' -l 'csv' -d 'Print the outages as CSV (the columns of the report\'s table).'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" report' -l 'report' -d 'Write an HTML report (timeline, availability, outages, causes) to this file.' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" color' -l 'color' -d 'Colour the chart: auto (when standard output is a terminal and NO_COLOR is not set), always or never.' -rfka 'auto always never'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" config' -l 'config' -d 'Config file naming the log (default: the user\'s).' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline history" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline wait-online" timeout' -l 'timeout' -d 'How long to wait: 500ms, 30s, 2m.' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline wait-online" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline wait-online" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline run" timeout' -l 'timeout' -d 'The longest time to wait for the network, over all attempts (default: no limit). A running CMD is never stopped by it.' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline run" retries' -l 'retries' -d 'How many times to run CMD again after it failed while the connection was lost.' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline run" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline run" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline diagnose" json' -l 'json' -d 'Print the checks and the verdict as one JSON object.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline diagnose" url' -l 'url' -d 'The check URL (default: the config\'s probe urls).' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline diagnose" timeout' -l 'timeout' -d 'Timeout of each network check (default: the config\'s probe timeout).' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline diagnose" config' -l 'config' -d 'Config file whose probe settings to use (default: the user\'s).' -rfka ''
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline diagnose" version' -l 'version' -d 'Show the version.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline diagnose" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'lifeline' -n '__lifeline_should_offer_completions_for_flags_or_options "lifeline help" version' -l 'version' -d 'Show the version.'
