using XCall.Runtime;

namespace XCall.FastProxy.Tests;

/// <summary>
/// <see cref="WakeWord"/>, the word a synchronous caller sleeps on while its reply is on the way: a wake-up that races
/// the owner's check is never lost, and a late signal only ends a sleep early. Where futexes are missing the callers
/// keep their monitor, and these tests say so and check nothing else.
/// </summary>
public sealed class WakeWordTests
{
    // A failure bound only: every wait ends as soon as what it waits for happens.
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(60);

    [SkippableFact]
    public void Two_threads_hand_a_turn_back_and_forth_through_their_words_and_no_wake_up_is_lost()
    {
        Skip.IfNot(WakeWord.IsSupported, "No futex here (not Linux on x86-64 or arm64): PendingCall sleeps on its monitor, which the call tests cover.");
        const int Turns = 20_000;
        var words = new[] { new WakeWord(), new WakeWord() };
        int turn = 0; // even: thread 0 moves; odd: thread 1
        int[] moves = new int[2];
        void Play(int me)
        {
            WakeWord mine = words[me];
            WakeWord theirs = words[1 - me];
            for (int i = 0; i < Turns; i++)
            {
                while (true)
                {
                    mine.Prepare();
                    if ((Volatile.Read(ref turn) & 1) == me)
                    {
                        mine.Cancel();
                        break;
                    }
                    mine.Sleep(-1);
                }
                moves[me]++;
                Interlocked.Increment(ref turn); // a full fence before the other side's word is read
                if (theirs.TakeSleeper())
                {
                    theirs.Signal();
                }
            }
        }
        var players = new[] { new Thread(() => Play(0)), new Thread(() => Play(1)) };
        foreach (Thread player in players)
        {
            player.Start();
        }
        Assert.All(players, p => Assert.True(p.Join(Bound), "a player slept through its turn: a wake-up was lost"));
        Assert.Equal(new[] { Turns, Turns }, moves);
        Assert.Equal(2 * Turns, turn);
    }

    [SkippableFact]
    public void A_signal_claimed_before_the_sleep_ends_it_at_once_and_a_sleep_nobody_ends_times_out()
    {
        Skip.IfNot(WakeWord.IsSupported, "No futex here (not Linux on x86-64 or arm64): PendingCall sleeps on its monitor, which the call tests cover.");
        var word = new WakeWord();
        word.Prepare();
        Assert.True(word.TakeSleeper()); // the waker claimed the owner between its check and its sleep
        Assert.False(word.TakeSleeper()); // only one waker signals
        var sleeper = new Thread(() => word.Sleep(-1)); // would sleep for ever if the word still read "asleep"
        sleeper.Start();
        Assert.True(sleeper.Join(Bound), "a sleep after the waker's claim did not return");
        word.Signal(); // late: wakes nobody, and harms nobody

        word.Prepare();
        word.Sleep(1); // nobody wakes it: it returns when its time is up
        Assert.True(word.TakeSleeper()); // still "asleep" until a waker takes it (or the owner cancels)
        word.Prepare();
        word.Cancel();
        Assert.False(word.TakeSleeper());
    }
}
