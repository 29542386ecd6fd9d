module XCall.Samples.FSharpClient.Program

open System
open System.Threading
open XCall
open XCall.Samples.Inventory

/// Serves an F# Inventory at the address until standard input closes or gives a line.
let serve (address: string) =
    use server = (new XCallServer()).Add<IInventory>(Inventory())
    use listener = Remote.Serve(address, server)
    printfn "serving %s" address
    Console.In.ReadLine() |> ignore
    0

/// Calls the inventory at the address through the proxy generated in the C# contract's assembly.
let call (address: string) =
    use inventory = Remote.Open<IInventory>(address)
    let proxy = inventory.Proxy
    printfn "apple: %d" (proxy.Add("apple", 3))
    printfn "apple: %d" (proxy.Add("apple", 4))
    printfn "pear: %d" (proxy.Add("pear", 2))
    let apples = proxy.CountAsync("apple", CancellationToken.None) |> Async.AwaitTask |> Async.RunSynchronously
    printfn "counted apple: %d" apples
    for line in proxy.List() do
        printfn "stock %s = %d" line.Name line.Count
    try
        proxy.Take("pear", 5)
        printfn "took 5 pear"
    with :? RemoteInvocationException as e ->
        printfn "refused: %s: %s" e.RemoteTypeName e.RemoteMessage
    0

[<EntryPoint>]
let main argv =
    match argv with
    | [| "serve"; address |] -> serve address
    | [| address |] -> call address
    | _ ->
        eprintfn "usage: XCall.Samples.FSharpClient serve ADDRESS | XCall.Samples.FSharpClient ADDRESS"
        2
