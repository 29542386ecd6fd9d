#!/usr/bin/env escript
%%! +P 4194304
%% The Erlang ring, for bench --suite channels: N processes, M laps of one token.
%% Prints: RESULT <ns per hop> <peak RSS bytes> <bytes per process>. The emulator flag above
%% raises the process limit (default 262,144 for the whole node) for the largest rings.
-mode(compile).

main([NS, MS]) ->
    N = list_to_integer(NS),
    M = list_to_integer(MS),
    Before = erlang:memory(processes),
    First = lists:foldl(fun(_, Next) -> spawn(fun() -> forward(Next) end) end, self(), lists:seq(1, N - 1)),
    Built = erlang:memory(processes),
    T0 = erlang:monotonic_time(nanosecond),
    laps(First, M),
    T1 = erlang:monotonic_time(nanosecond),
    io:format("RESULT ~.1f ~b ~b~n", [(T1 - T0) / (N * M), peak_rss(), (Built - Before) div (N - 1)]),
    halt(0).

forward(Next) ->
    receive
        Token -> Next ! Token, forward(Next)
    end.

laps(_, 0) -> ok;
laps(First, K) ->
    First ! K,
    receive
        K -> laps(First, K - 1)
    end.

peak_rss() ->
    Line = os:cmd("grep VmHWM /proc/" ++ os:getpid() ++ "/status"),
    case string:tokens(Line, " \t\n") of
        [_, Kb, _] -> list_to_integer(Kb) * 1024;
        _ -> 0
    end.
