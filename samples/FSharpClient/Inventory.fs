namespace XCall.Samples.FSharpClient

open System.Collections.Generic
open System.Threading.Tasks
open XCall.Samples.Inventory

/// The server's side, written in F#: a class that implements the C# contract.
type Inventory() =
    let stock = SortedDictionary<string, int>()
    let sync = obj ()

    let countOf item =
        match stock.TryGetValue item with
        | true, n -> n
        | _ -> 0

    interface IInventory with
        member _.Add(item, count) =
            lock sync (fun () ->
                let now = countOf item + count
                stock[item] <- now
                now)

        member _.CountAsync(item, _cancellationToken) = Task.FromResult(lock sync (fun () -> countOf item))

        member _.List() =
            lock sync (fun () -> [| for KeyValue(name, count) in stock -> Stock(Name = name, Count = count) |])

        member _.Take(item, count) =
            lock sync (fun () ->
                let have = countOf item
                if have < count then
                    invalidOp $"only {have} {item} left, {count} asked"
                stock[item] <- have - count)
