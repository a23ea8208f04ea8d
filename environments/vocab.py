"""What a procedural environment is made of: domains (their apps' names, tabs, the collections
of things their pages list and the fields each thing shows), styles (palettes, typography,
density, spacing, icon sets) and page archetypes. Data only; ``procedural.py`` draws from it.

A field's ``kind`` says how its values are drawn (``procedural.draw_value``) and which of
Memory-World's memory types it is (``devices/virtual/templates.WHAT``).
"""

from __future__ import annotations

from dataclasses import dataclass

# A field of a thing's page: its label and kind; ``pattern`` shapes codes ("A" a capital, "9" a
# digit, anything else itself), ``unit`` follows numbers.
Field = tuple[str, str, str]  # (label, kind, pattern or unit)


@dataclass(frozen=True)
class Collection:
    tab: str  # the tab (or page) that lists them
    noun: str  # one of them, as the goal names it ("trip")
    names: tuple[str, ...]  # their titles
    subtitles: tuple[str, ...]  # a list row's second line (never a value a task asks)
    fields: tuple[Field, ...]  # what each one's page shows


@dataclass(frozen=True)
class Domain:
    name: str
    prefixes: tuple[str, ...]
    suffixes: tuple[str, ...]
    collections: tuple[Collection, ...]
    extra_tabs: tuple[str, ...]  # tabs with no memory value: feed, settings, search, form
    feed_lines: tuple[str, ...]


PEOPLE = (
    "Ava Kim", "Noah Patel", "Lena Ortiz", "Ravi Shah", "Mia Novak", "Omar Haddad", "Zoe Brandt",
    "Jonas Berg", "Sofia Costa", "Liam Walsh", "Nadia Okafor", "Tomas Ruiz", "Elena Petrov",
    "Kofi Mensah", "Hana Sato", "Lucas Meyer", "Priya Nair", "Felix Duval", "Ines Moreau",
    "Marco Rossi",
)  # fmt: skip

DOMAINS: tuple[Domain, ...] = (
    Domain(
        "shopping",
        ("Cart", "Shop", "Market", "Deal", "Basket", "Buy", "Trade", "Store"),
        ("ly", "Hub", "Nest", "Bay", "Point", "Loop", "Mate", "Box"),
        (
            Collection(
                "Orders",
                "order",
                (
                    "Trail Running Shoes",
                    "Ceramic Pour-Over Set",
                    "Wireless Earbuds",
                    "Desk Lamp",
                    "Wool Throw Blanket",
                    "Smart Scale",
                    "Travel Backpack",
                    "Cast Iron Skillet",
                    "Yoga Mat",
                    "Bluetooth Speaker",
                ),
                ("Delivered", "Shipped", "Processing", "Out for delivery"),
                (
                    ("Order number", "code", "OR-999999"),
                    ("Total paid", "price", ""),
                    ("Delivery slot", "time", ""),
                    ("Pickup code", "code", "9999"),
                ),
            ),
            Collection(
                "Wishlist",
                "saved item",
                (
                    "Linen Shirt",
                    "Espresso Grinder",
                    "Noise Cancelling Headphones",
                    "Rain Jacket",
                    "Standing Desk",
                    "Cookware Set",
                    "Mechanical Keyboard",
                    "Hiking Boots",
                    "Air Purifier",
                    "Reading Chair",
                ),
                ("Saved last week", "Back in stock", "Limited offer", "Price dropped"),
                (
                    ("Current price", "price", ""),
                    ("Item code", "code", "AA-9999"),
                    ("Seller rating", "number", "%"),
                ),
            ),
            Collection(
                "Coupons",
                "coupon",
                (
                    "Spring Sale",
                    "Welcome Back",
                    "Free Shipping",
                    "Member Day",
                    "Weekend Flash",
                    "Loyalty Reward",
                    "Student Deal",
                    "Bundle Bonus",
                ),
                ("Expires soon", "New", "Online only", "In store"),
                (
                    ("Coupon code", "code", "AAA9A9"),
                    ("Minimum spend", "price", ""),
                    ("Valid until", "date", ""),
                ),
            ),
        ),
        ("Home", "Search", "Account", "Help"),
        (
            "New arrivals just landed",
            "Your cart misses you",
            "Top picks for the weekend",
            "Members save more this week",
            "Five gift ideas under $30",
        ),
    ),
    Domain(
        "travel",
        ("Trip", "Way", "Jet", "Roam", "Voyage", "Sky", "Globe", "Route"),
        ("Nest", "Go", "ly", "Hub", "Pal", "Wise", "Path", "Line"),
        (
            Collection(
                "Trips",
                "trip",
                (
                    "Lisbon Getaway",
                    "Osaka Food Tour",
                    "Denver Ski Week",
                    "Tallinn Old Town",
                    "Porto Weekend",
                    "Seville Spring Break",
                    "Quito Highlands",
                    "Bergen Fjords",
                    "Kyoto Temples",
                    "Malta Coast",
                ),
                ("Upcoming", "Confirmed", "Planning", "Waitlisted"),
                (
                    ("Booking reference", "code", "AAA9AA"),
                    ("Departure", "time", ""),
                    ("Fare", "price", ""),
                    ("Seat", "code", "99A"),
                ),
            ),
            Collection(
                "Stays",
                "stay",
                (
                    "Harbor View Hotel",
                    "Old Mill Inn",
                    "Garden Loft",
                    "Cliffside Suites",
                    "Central Hostel",
                    "Riverside Apartments",
                    "Pine Lodge",
                    "Lighthouse B&B",
                ),
                ("2 nights", "3 nights", "1 night", "5 nights"),
                (
                    ("Confirmation code", "code", "99999999"),
                    ("Check-in", "time", ""),
                    ("Room", "number", ""),
                    ("Nightly rate", "price", ""),
                ),
            ),
            Collection(
                "Passes",
                "pass",
                (
                    "City Museum Pass",
                    "Metro Week Card",
                    "Airport Lounge",
                    "Harbor Ferry",
                    "Castle Tour",
                    "Bike Share Day",
                ),
                ("Active", "Ready to use", "Expires soon", "Valid today"),
                (
                    ("Pass number", "code", "P-99999"),
                    ("Valid until", "date", ""),
                    ("Price", "price", ""),
                ),
            ),
        ),
        ("Explore", "Inbox", "Profile", "Settings"),
        (
            "Flash sale on island hops",
            "Your boarding passes are ready",
            "Packing tips for spring",
            "Rail passes now 20% off",
            "Top rated stays nearby",
        ),
    ),
    Domain(
        "banking",
        ("Coin", "Ledger", "Vault", "Fund", "Penny", "Cash", "Mint", "Bank"),
        ("ly", "Wise", "Flow", "Box", "Track", "Base", "Hub", "Pro"),
        (
            Collection(
                "Payments",
                "payment",
                (
                    "Rent March",
                    "Electricity Bill",
                    "Internet Plan",
                    "Gym Membership",
                    "Car Insurance",
                    "Phone Bill",
                    "Water Utility",
                    "Streaming Service",
                    "Council Tax",
                    "Parking Permit",
                ),
                ("Paid", "Scheduled", "Pending", "Recurring"),
                (
                    ("Reference", "code", "RF999999"),
                    ("Amount", "price", ""),
                    ("Due time", "time", ""),
                    ("Payee account", "code", "9999 9999"),
                ),
            ),
            Collection(
                "Cards",
                "card",
                (
                    "Everyday Debit",
                    "Travel Credit",
                    "Virtual Shopping",
                    "Joint Account Card",
                    "Business Card",
                    "Savings Card",
                ),
                ("Active", "Frozen", "Contactless on", "New"),
                (
                    ("Last digits", "code", "9999"),
                    ("Spending limit", "price", ""),
                    ("Cashback", "number", "%"),
                ),
            ),
            Collection(
                "Goals",
                "savings goal",
                (
                    "Summer Holiday",
                    "New Laptop",
                    "Emergency Fund",
                    "Wedding Gift",
                    "Bike Upgrade",
                    "Home Deposit",
                    "Concert Tickets",
                    "Course Fees",
                ),
                ("On track", "Behind", "Almost there", "Just started"),
                (
                    ("Saved so far", "price", ""),
                    ("Target date", "date", ""),
                    ("Goal ID", "code", "G-9999"),
                ),
            ),
        ),
        ("Home", "Insights", "Support", "Profile"),
        (
            "Your monthly summary is ready",
            "Set up a savings rule",
            "New card designs",
            "Tips to cut your bills",
            "Security check completed",
        ),
    ),
    Domain(
        "social",
        ("Chat", "Friend", "Circle", "Buzz", "Pulse", "Echo", "Vibe", "Link"),
        ("ly", "Hub", "Spot", "Zone", "Yard", "Room", "Feed", "Nest"),
        (
            Collection(
                "Groups",
                "group",
                (
                    "Book Club",
                    "Trail Runners",
                    "Board Game Night",
                    "Photo Walks",
                    "Vegan Recipes",
                    "Garden Swap",
                    "Language Exchange",
                    "Chess Corner",
                    "Film Society",
                ),
                ("12 new posts", "Quiet today", "Event soon", "3 new members"),
                (
                    ("Invite code", "code", "AAAA-99"),
                    ("Meetup time", "time", ""),
                    ("Organizer", "name", ""),
                    ("Members", "number", ""),
                ),
            ),
            Collection(
                "Events",
                "event",
                (
                    "Rooftop Picnic",
                    "Charity 5K",
                    "Pottery Workshop",
                    "Jazz Evening",
                    "Beach Cleanup",
                    "Trivia Night",
                    "Coding Meetup",
                    "Farmers Market Trip",
                ),
                ("Going", "Interested", "Invited", "Hosting"),
                (
                    ("Ticket code", "code", "TK-99999"),
                    ("Starts at", "time", ""),
                    ("Date", "date", ""),
                    ("Host", "name", ""),
                ),
            ),
            Collection(
                "Contacts",
                "contact",
                PEOPLE[:10],
                ("Online", "Last seen today", "Away", "Busy"),
                (
                    ("Friend code", "code", "9999-9999"),
                    ("Birthday", "date", ""),
                    ("Favorite spot", "code", "AA-99"),
                ),
            ),
        ),
        ("Feed", "Messages", "Profile", "Settings"),
        (
            "Weekend plans anyone?",
            "Throwback to last summer",
            "New group challenge starts today",
            "Who is up for a hike?",
            "Photos from the meetup are up",
        ),
    ),
    Domain(
        "health",
        ("Care", "Vital", "Well", "Heal", "Cure", "Med", "Life", "Pulse"),
        ("ly", "Track", "Point", "Plus", "Now", "Mate", "Line", "Hub"),
        (
            Collection(
                "Appointments",
                "appointment",
                (
                    "Dental Checkup",
                    "Eye Exam",
                    "Physiotherapy",
                    "Annual Physical",
                    "Skin Clinic",
                    "Blood Test",
                    "Flu Shot",
                    "Nutrition Consult",
                    "Hearing Test",
                ),
                ("Confirmed", "Rescheduled", "Awaiting", "Reminder set"),
                (
                    ("Visit code", "code", "V-99999"),
                    ("Time", "time", ""),
                    ("Room", "code", "A99"),
                    ("Doctor", "name", ""),
                ),
            ),
            Collection(
                "Prescriptions",
                "prescription",
                (
                    "Allergy Relief",
                    "Vitamin D",
                    "Blood Pressure",
                    "Asthma Inhaler",
                    "Iron Tablets",
                    "Eye Drops",
                    "Antibiotic Course",
                ),
                ("Ready for pickup", "Refill due", "Active", "Completed"),
                (
                    ("Rx number", "code", "RX-999999"),
                    ("Dose", "number", " mg"),
                    ("Refill date", "date", ""),
                ),
            ),
            Collection(
                "Results",
                "test result",
                (
                    "Cholesterol Panel",
                    "Vitamin Levels",
                    "Glucose Test",
                    "Thyroid Check",
                    "Iron Study",
                    "Allergy Panel",
                ),
                ("New", "Reviewed", "Shared", "Archived"),
                (
                    ("Sample ID", "code", "S-9999-AA"),
                    ("Value", "number", ""),
                    ("Reviewed by", "name", ""),
                ),
            ),
        ),
        ("Today", "Messages", "Profile", "Settings"),
        (
            "Remember to drink water",
            "Your step goal is in reach",
            "Flu season reminders",
            "New clinic hours",
            "Sleep tips for busy weeks",
        ),
    ),
    Domain(
        "productivity",
        ("Task", "Note", "Plan", "Focus", "Desk", "Work", "List", "Done"),
        ("ly", "Flow", "Board", "Base", "Pad", "Hub", "Pro", "Box"),
        (
            Collection(
                "Projects",
                "project",
                (
                    "Website Redesign",
                    "Quarterly Report",
                    "Office Move",
                    "Hiring Plan",
                    "Product Launch",
                    "Budget Review",
                    "Client Onboarding",
                    "Team Retreat",
                ),
                ("On track", "At risk", "Blocked", "Done soon"),
                (
                    ("Project key", "code", "AAA-999"),
                    ("Deadline", "date", ""),
                    ("Owner", "name", ""),
                    ("Budget", "price", ""),
                ),
            ),
            Collection(
                "Meetings",
                "meeting",
                (
                    "Design Review",
                    "Weekly Sync",
                    "Budget Call",
                    "Kickoff",
                    "One on One",
                    "Planning Poker",
                    "Retro",
                    "Town Hall",
                ),
                ("Today", "Tomorrow", "Next week", "Recurring"),
                (
                    ("Room code", "code", "R-999"),
                    ("Starts at", "time", ""),
                    ("Dial-in PIN", "code", "999 999"),
                ),
            ),
            Collection(
                "Documents",
                "document",
                (
                    "Style Guide",
                    "Onboarding Checklist",
                    "Vendor Contract",
                    "Sprint Notes",
                    "Travel Policy",
                    "Roadmap Draft",
                ),
                ("Edited today", "Shared with you", "Draft", "Final"),
                (
                    ("Document ID", "code", "DOC-9999"),
                    ("Pages", "number", ""),
                    ("Editor", "name", ""),
                ),
            ),
        ),
        ("Inbox", "Search", "Calendar", "Settings"),
        (
            "Three tasks are due today",
            "Your weekly review is ready",
            "Focus mode tips",
            "New templates available",
            "You completed 12 tasks this week",
        ),
    ),
    Domain(
        "food",
        ("Fork", "Dish", "Bite", "Plate", "Spoon", "Taste", "Chef", "Grill"),
        ("ly", "Go", "Hub", "Box", "Run", "Now", "Spot", "Pal"),
        (
            Collection(
                "Orders",
                "order",
                (
                    "Ramen House",
                    "Taco Stand",
                    "Green Bowl",
                    "Pizza Forno",
                    "Curry Corner",
                    "Sushi Bar",
                    "Burger Shed",
                    "Dim Sum Palace",
                    "Falafel King",
                ),
                ("Delivered", "On the way", "Preparing", "Picked up"),
                (
                    ("Order code", "code", "FD-9999"),
                    ("Total", "price", ""),
                    ("Arrival", "time", ""),
                    ("Courier", "name", ""),
                ),
            ),
            Collection(
                "Reservations",
                "reservation",
                (
                    "Olive Terrace",
                    "The Copper Pot",
                    "Harbor Grill",
                    "Sage Kitchen",
                    "Blue Door",
                    "Nonna's Table",
                    "Cedar Room",
                ),
                ("Confirmed", "Waitlist", "Table ready", "Pending"),
                (
                    ("Reservation code", "code", "AA9999"),
                    ("Time", "time", ""),
                    ("Table", "number", ""),
                    ("Deposit", "price", ""),
                ),
            ),
            Collection(
                "Recipes",
                "recipe",
                (
                    "Lemon Risotto",
                    "Chili Beans",
                    "Banana Bread",
                    "Pad Thai",
                    "Shakshuka",
                    "Miso Soup",
                    "Apple Crumble",
                ),
                ("Saved", "Quick", "Vegetarian", "Family size"),
                (
                    ("Recipe ID", "code", "RC-999"),
                    ("Cook time", "number", " min"),
                    ("Author", "name", ""),
                ),
            ),
        ),
        ("Discover", "Search", "Profile", "Help"),
        (
            "Free delivery tonight",
            "New spots near you",
            "Chef specials this week",
            "Rate your last order",
            "Lunch deals until 2 pm",
        ),
    ),
    Domain(
        "education",
        ("Learn", "Study", "Class", "Skill", "Mind", "Tutor", "Book", "Quiz"),
        ("ly", "Hub", "Path", "Room", "Base", "Pro", "Up", "Nest"),
        (
            Collection(
                "Courses",
                "course",
                (
                    "Intro to Statistics",
                    "Spanish A2",
                    "Python Basics",
                    "Art History",
                    "Public Speaking",
                    "Music Theory",
                    "Creative Writing",
                    "Digital Marketing",
                ),
                ("In progress", "New lessons", "Completed", "Starts soon"),
                (
                    ("Course code", "code", "AAA-999"),
                    ("Next lesson", "time", ""),
                    ("Instructor", "name", ""),
                    ("Fee", "price", ""),
                ),
            ),
            Collection(
                "Assignments",
                "assignment",
                (
                    "Essay Draft",
                    "Lab Report",
                    "Group Project",
                    "Reading Quiz",
                    "Final Paper",
                    "Case Study",
                    "Presentation Slides",
                ),
                ("Due soon", "Submitted", "Graded", "Late"),
                (
                    ("Submission ID", "code", "SUB-99999"),
                    ("Due date", "date", ""),
                    ("Score", "number", "%"),
                ),
            ),
            Collection(
                "Exams",
                "exam",
                (
                    "Midterm Calculus",
                    "Biology Final",
                    "French Oral",
                    "History Quiz",
                    "Chemistry Lab Exam",
                    "Economics Final",
                ),
                ("Scheduled", "Registered", "Room assigned", "Results out"),
                (
                    ("Seat number", "code", "A-99"),
                    ("Start time", "time", ""),
                    ("Exam date", "date", ""),
                ),
            ),
        ),
        ("Home", "Search", "Profile", "Settings"),
        (
            "Study streak: 5 days",
            "New course recommendations",
            "Exam tips from top students",
            "Live session starts soon",
            "Your certificate is ready",
        ),
    ),
    Domain(
        "fitness",
        ("Fit", "Move", "Lift", "Run", "Stride", "Core", "Flex", "Peak"),
        ("ly", "Club", "Track", "Zone", "Lab", "Go", "Pro", "Hub"),
        (
            Collection(
                "Classes",
                "class",
                (
                    "Morning Spin",
                    "Power Yoga",
                    "HIIT Blast",
                    "Pilates Core",
                    "Boxing Basics",
                    "Aqua Fit",
                    "Kettlebell Flow",
                    "Evening Stretch",
                ),
                ("Booked", "Waitlist", "Spots left", "Full"),
                (
                    ("Booking code", "code", "BK-9999"),
                    ("Starts at", "time", ""),
                    ("Coach", "name", ""),
                    ("Studio", "code", "S9"),
                ),
            ),
            Collection(
                "Workouts",
                "workout",
                (
                    "Tempo Run",
                    "Leg Day",
                    "Long Ride",
                    "Upper Body",
                    "Recovery Walk",
                    "Interval Row",
                    "Core Circuit",
                ),
                ("Completed", "Planned", "Skipped", "Personal best"),
                (
                    ("Distance", "number", " km"),
                    ("Calories", "number", " kcal"),
                    ("Workout ID", "code", "W-99999"),
                ),
            ),
            Collection(
                "Memberships",
                "membership",
                (
                    "Gold Plan",
                    "Off-Peak Plan",
                    "Student Plan",
                    "Family Plan",
                    "Day Pass",
                    "Pool Only",
                ),
                ("Active", "Paused", "Renews soon", "Trial"),
                (
                    ("Member ID", "code", "M99999"),
                    ("Monthly fee", "price", ""),
                    ("Renewal date", "date", ""),
                ),
            ),
        ),
        ("Today", "Challenges", "Profile", "Settings"),
        (
            "New personal record!",
            "Join the 30-day challenge",
            "Stretching tips after runs",
            "Studio hours extended",
            "Your weekly summary",
        ),
    ),
    Domain(
        "entertainment",
        ("Stream", "Show", "Tune", "Play", "Reel", "Stage", "Beat", "Cine"),
        ("ly", "Box", "Hub", "Flix", "Wave", "Zone", "Go", "Max"),
        (
            Collection(
                "Tickets",
                "ticket",
                (
                    "Summer Jazz Night",
                    "Comedy Club",
                    "Indie Film Premiere",
                    "Symphony Gala",
                    "Rock Festival",
                    "Magic Show",
                    "Ballet Classics",
                    "Theatre Matinee",
                ),
                ("Upcoming", "Transferred", "Resale", "Confirmed"),
                (
                    ("Ticket number", "code", "TX-999999"),
                    ("Doors open", "time", ""),
                    ("Seat", "code", "A99"),
                    ("Price", "price", ""),
                ),
            ),
            Collection(
                "Playlists",
                "playlist",
                (
                    "Road Trip Mix",
                    "Focus Beats",
                    "Sunday Chill",
                    "Workout Hits",
                    "Rainy Day Jazz",
                    "Party Starters",
                    "Sleep Sounds",
                ),
                ("Updated", "Downloaded", "Shared", "New"),
                (
                    ("Share code", "code", "AAAA99"),
                    ("Tracks", "number", ""),
                    ("Curator", "name", ""),
                ),
            ),
            Collection(
                "Rentals",
                "rental",
                (
                    "The Long Voyage",
                    "City of Glass",
                    "Silent Harbor",
                    "Neon Nights",
                    "Mountain Echo",
                    "The Last Orchard",
                ),
                ("48 hours left", "Watched", "Expires today", "Not started"),
                (
                    ("Rental ID", "code", "RN-9999"),
                    ("Rental price", "price", ""),
                    ("Expires on", "date", ""),
                ),
            ),
        ),
        ("Home", "Search", "Library", "Profile"),
        (
            "New releases this Friday",
            "Because you watched Silent Harbor",
            "Live shows near you",
            "Your year in music",
            "Top 10 this week",
        ),
    ),
)

# --- style ------------------------------------------------------------------------------------

# (primary, accent, background, surface, text, muted): readable pairs (text on surface and
# white on primary).
PALETTES: tuple[tuple[str, ...], ...] = (
    ("#1b5e20", "#ff8f00", "#f4f6f3", "#ffffff", "#1b1f1b", "#5f6b5f"),
    ("#0d47a1", "#00acc1", "#f3f6fb", "#ffffff", "#172033", "#59647a"),
    ("#4a148c", "#ff4081", "#f7f3fa", "#ffffff", "#221a2b", "#6a5f75"),
    ("#b71c1c", "#ffb300", "#fbf4f3", "#ffffff", "#2b1818", "#7a5f5f"),
    ("#004d40", "#ffab40", "#eef6f4", "#ffffff", "#13201e", "#56706b"),
    ("#263238", "#26a69a", "#eceff1", "#ffffff", "#1c2326", "#5f6f77"),
    ("#3e2723", "#8bc34a", "#f6f2ef", "#fffdfb", "#241a17", "#6d5f59"),
    ("#1a237e", "#ffd600", "#f2f3fa", "#ffffff", "#181a2e", "#5c6080"),
    ("#880e4f", "#00bfa5", "#fbf2f6", "#ffffff", "#2a1420", "#7a5a69"),
    ("#e65100", "#3949ab", "#fdf5ef", "#ffffff", "#2b1d12", "#7a6656"),
    ("#006064", "#f06292", "#eef7f8", "#ffffff", "#12262a", "#55727a"),
    ("#33691e", "#7e57c2", "#f3f7ef", "#ffffff", "#1d2615", "#5e6f52"),
    ("#212121", "#ff7043", "#f5f5f5", "#ffffff", "#111111", "#666666"),
    ("#01579b", "#c0ca33", "#eff5fa", "#ffffff", "#13222f", "#56697a"),
    ("#6a1b9a", "#ffca28", "#f6f1f9", "#ffffff", "#24152d", "#6b5a76"),
    ("#bf360c", "#00897b", "#fcf3ef", "#ffffff", "#2c1810", "#7a6157"),
)
FONTS = (
    '"Roboto", "DejaVu Sans", sans-serif',
    '"Noto Sans", "DejaVu Sans", sans-serif',
    '"DejaVu Sans", sans-serif',
    '"Liberation Sans", Arial, sans-serif',
    '"Noto Serif", "DejaVu Serif", serif',
    '"DejaVu Sans Condensed", "DejaVu Sans", sans-serif',
)
# name -> (base font px, row padding px, gap px)
DENSITIES = {"compact": (13, 8, 6), "regular": (15, 12, 10), "comfortable": (16, 16, 14)}
RADII = (0, 4, 8, 12, 18)
# Glyphs every page font has (DejaVu covers them): no emoji, no images.
ICON_SETS = {
    "geometric": ("●", "■", "▲", "◆", "★"),
    "outline": ("○", "□", "△", "◇", "☆"),
    "arrows": ("➤", "➜", "➔", "➙", "➛"),
    "letters": ("", "", "", "", ""),  # the tab's first letter
    "bars": ("▤", "▥", "▦", "▧", "▨"),
}
HEADERS = ("solid", "light", "outlined")
LIST_STYLES = ("cards", "rows", "tiles")

# --- page archetypes ---------------------------------------------------------------------------

# Archetypes of the tabs that list a collection, and of those that hold no task value.
LISTING = ("list", "grid", "feed_list", "search_list")
OTHER = ("feed", "settings", "form", "search", "dashboard")
