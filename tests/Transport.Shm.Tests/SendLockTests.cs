namespace XCall.Transport.Shm.Tests;

/// <summary>The send side's lock (SendLock's design notes): exclusion under contention, re-entry told apart, timeouts.</summary>
public sealed class SendLockTests
{
    [Fact]
    public void Many_threads_never_hold_the_lock_together_and_every_entry_gets_through()
    {
        var sendLock = new SendLock();
        const int Threads = 8;
        const int Rounds = 50_000;
        int inside = 0;
        long counter = 0; // a plain read-modify-write: only exclusion keeps every increment
        int overlaps = 0;
        var threads = new Thread[Threads];
        for (int t = 0; t < Threads; t++)
        {
            threads[t] = new Thread(() =>
            {
                for (int i = 0; i < Rounds; i++)
                {
                    Assert.Equal(SendLock.Outcome.Entered, sendLock.Enter());
                    if (Interlocked.Increment(ref inside) != 1)
                    {
                        Interlocked.Increment(ref overlaps);
                    }
                    counter++;
                    if (i % 1000 == 0)
                    {
                        Thread.Yield(); // holds the lock across a reschedule: the others block
                    }
                    Interlocked.Decrement(ref inside);
                    sendLock.Exit();
                }
            });
            threads[t].Start();
        }
        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(TimeSpan.FromSeconds(60)), "a thread never got the lock");
        }
        Assert.Equal(0, overlaps);
        Assert.Equal((long)Threads * Rounds, counter);
        Assert.False(sendLock.IsHeldByCurrentThread);
    }

    [Fact]
    public void The_holding_thread_entering_again_is_told_so_and_keeps_the_lock()
    {
        var sendLock = new SendLock();
        Assert.Equal(SendLock.Outcome.Entered, sendLock.Enter());
        Assert.Equal(SendLock.Outcome.Reentered, sendLock.Enter());
        Assert.Equal(SendLock.Outcome.Reentered, sendLock.TryEnter(1000));
        Assert.True(sendLock.IsHeldByCurrentThread);
        sendLock.Exit();
        Assert.False(sendLock.IsHeldByCurrentThread);
        Assert.Equal(SendLock.Outcome.Entered, sendLock.TryEnter(0));
        sendLock.Exit();
    }

    [Fact]
    public void A_timed_entry_times_out_while_another_thread_holds_the_lock_and_gets_it_once_released()
    {
        var sendLock = new SendLock();
        using var held = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var holder = new Thread(() =>
        {
            sendLock.Enter();
            held.Set();
            release.Wait();
            sendLock.Exit();
        });
        holder.Start();
        held.Wait();
        Assert.False(sendLock.IsHeldByCurrentThread);
        Assert.Equal(SendLock.Outcome.TimedOut, sendLock.TryEnter(0));
        Assert.Equal(SendLock.Outcome.TimedOut, sendLock.TryEnter(20));

        var waiter = Task.Factory.StartNew(() => sendLock.TryEnter(30_000), TaskCreationOptions.LongRunning);
        release.Set();
        Assert.Equal(SendLock.Outcome.Entered, waiter.Result); // woken by the release (or its bounded sleep), well within the timeout
        holder.Join();
    }
}
